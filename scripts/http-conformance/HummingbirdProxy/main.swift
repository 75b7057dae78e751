#if Hummingbird && AsyncHTTPClient
// stash-hummingbird-proxy: the conformance harness of StashHummingbird (scripts/http-conformance/run.sh
// hummingbird). A Hummingbird app made of HTTPCacheMiddleware (shared mode) and one route that
// forwards every request to one origin, as stash-proxy does:
//
//   stash-hummingbird-proxy --listen 127.0.0.1:8003 --origin http://127.0.0.1:8000 [--directory DIR] [--responder]
import AsyncHTTPClient
import Hummingbird
import HTTPTypes
import Logging
import NIOCore
import StashAsyncHTTPClient
import StashHTTP
import StashHummingbird

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The value after `flag` on the command line.
func argument(_ flag: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: flag), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

guard let listen = argument("--listen"), let separator = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: separator)...]),
      let origin = argument("--origin"), origin.hasPrefix("http://")
else {
    print("usage: stash-hummingbird-proxy --listen HOST:PORT --origin http://HOST:PORT [--directory DIR]")
    exit(2)
}
let host = String(listen[..<separator])
let originAuthority = String(origin.dropFirst("http://".count))

var configuration = HTTPCache.Configuration(mode: .shared, directory: argument("--directory"))
configuration.staleIfUnreachable = .seconds(86_400)
let cache = try HTTPCache(configuration: configuration)
var clientConfiguration = HTTPClient.Configuration()
clientConfiguration.redirectConfiguration = .disallow
clientConfiguration.decompression = .disabled
clientConfiguration.connectionPool.idleTimeout = .seconds(4)
clientConfiguration.connectionPool.retryConnectionEstablishment = false
clientConfiguration.timeout.read = .seconds(30)
let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
let fetcher = OriginFetcher(client: client, timeout: .seconds(30))

// --responder: the router behind HTTPCacheResponder (background revalidation) instead of the middleware.
let asResponder = CommandLine.arguments.contains("--responder")
let router = Router()
if !asResponder { router.add(middleware: HTTPCacheMiddleware(cache: cache, keepsStoredDate: true)) }
let forward: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, _ in
    var head = request.head
    if head.method.rawValue == "MSEARCH" { head.method = HTTPRequest.Method("M-SEARCH")! }
    head.scheme = "http"
    head.authority = originAuthority
    let bytes = try await request.body.collect(upTo: 64 << 20)
    do {
        let (response, body) = try await fetcher.fetch(head, body: bytes.readableBytes > 0 ? .bytes(bytes) : nil)
        let length = response.headerFields[.contentLength].flatMap { Int($0) }
        return Response(status: response.status, headers: response.headerFields, body: ResponseBody(contentLength: length) { writer in
            for try await chunk in body { try await writer.write(chunk) }
            try await writer.finish(nil)
        })
    } catch let error as CachingHTTPClientError {
        // Thrown, not answered: the cache then serves a stale response when one may be served
        // (staleIfUnreachable, stale-if-error); otherwise Hummingbird answers with this status.
        throw HTTPError(error.code == .originTimedOut ? .gatewayTimeout : .badGateway)
    }
}
// NIOHTTPTypesHTTP1 turns M-SEARCH into "MSEARCH" (and NIO writes it back as M-SEARCH to the origin).
for method: HTTPRequest.Method in [.get, .head, .post, .put, .delete, .patch, .options, HTTPRequest.Method("MSEARCH")!] {
    router.on("/", method: method, use: forward)
    router.on("**", method: method, use: forward)
}
var logger = Logger(label: "stash-hummingbird-proxy")
logger.logLevel = .warning
let address = ApplicationConfiguration(address: .hostname(host, port: port))
print("stash-hummingbird-proxy listening on \(host):\(port), origin \(origin)")
fflush(nil)
// With StoredDateChannelHandler, responses go out with their stored Date, not the one
// Hummingbird's Application writes.
if asResponder {
    let responder = HTTPCacheResponder(responder: router.buildResponder(), cache: cache, keepsStoredDate: true)
    try await Application(responder: responder, server: .http1(configuration: .init(additionalChannelHandlers: [StoredDateChannelHandler()])), configuration: address, logger: logger).runService()
} else {
    try await Application(router: router, server: .http1(configuration: .init(additionalChannelHandlers: [StoredDateChannelHandler()])), configuration: address, logger: logger).runService()
}
try await client.shutdown().get()
#else
print("stash-hummingbird-proxy needs the Hummingbird and AsyncHTTPClient traits: swift build --traits Hummingbird,AsyncHTTPClient --product stash-hummingbird-proxy")
#endif
