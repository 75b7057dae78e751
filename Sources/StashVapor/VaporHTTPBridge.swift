#if Vapor
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1
import Stash
import StashHTTP
import Vapor

// Vapor 4's requests and responses (NIOHTTP1's types) as swift-http-types' ones, which the cache
// speaks, and back. The fields cross with swift-nio-extras' NIOHTTPTypesHTTP1 conversions, as in
// the AsyncHTTPClient adapter and the proxy.

extension HTTPRequest {
    /// `request`'s head, or `nil` when its method is not a valid token. A server's request has no
    /// scheme, and its authority is its target's (absolute form) or its `Host` field: the cache's
    /// key needs both (`http`, and `localhost` without either).
    init?(_ request: Vapor.Request) {
        guard let method = HTTPRequest.Method(request.method.rawValue) else { return nil }
        var target = request.url.path.isEmpty ? "/" : request.url.path
        if let query = request.url.query { target += "?" + query }
        let authority = request.url.host.map { host in request.url.port.map { "\(host):\($0)" } ?? host }
        self.init(
            method: method, scheme: "http", authority: authority ?? request.headers.first(name: .host) ?? "localhost",
            path: target, headerFields: HTTPFields(request.headers, splitCookie: false))
    }
}

extension HTTPResponse {
    /// `response`'s head.
    ///
    /// - Throws: `StashError` (`invalidArgument`) for a status code above 999, which HTTP does not
    ///   allow (Vapor's `.custom(code:)` takes any).
    init(_ response: Vapor.Response) throws(StashError) {
        guard response.status.code <= 999 else {
            throw StashError(.invalidArgument, "the route answered with status \(response.status.code), not a three-digit code")
        }
        self.init(
            status: HTTPResponse.Status(code: Int(response.status.code), reasonPhrase: response.status.reasonPhrase),
            headerFields: HTTPFields(response.headers, splitCookie: false))
    }
}

extension Vapor.Request {
    /// A new request like this one, with `head`'s headers (the cache's validators) after this
    /// one's `Host` (which the request's head carries as its authority, not as a field): the same
    /// method, URL, body if already collected, peer certificate chain, route parameters, `storage`
    /// and service context.
    func copy(sending head: HTTPRequest) -> Vapor.Request {
        var headers = HTTPHeaders()
        if let host = self.headers.first(name: .host) { headers.add(name: .host, value: host) }
        headers.add(contentsOf: HTTPHeaders(head.headerFields))
        let copy = Vapor.Request(
            application: application, method: method, url: url, version: version,
            headersNoUpdate: headers, collectedBody: body.data,
            remoteAddress: remoteAddress, peerCertificateChain: peerCertificateChain, logger: logger,
            byteBufferAllocator: byteBufferAllocator, on: eventLoop)
        copy.parameters = parameters
        copy.route = route
        copy.storage = storage
        copy.serviceContext = serviceContext
        return copy
    }
}

extension Vapor.Response {
    /// The cache's answer as Vapor's response; a streamed body is written as it is read.
    ///
    /// Its `Date` is left out (Vapor's server writes one on every response, and a second would
    /// make the field invalid). A `304`, `204`, `1xx` or an answer to `HEAD` keeps the stored
    /// `Content-Length`, which describes the body a `GET` would get, not this empty one.
    convenience init(_ head: HTTPResponse, body: HTTPCacheBody, forHead: Bool, allocator: ByteBufferAllocator) {
        let status = HTTPResponseStatus(statusCode: head.status.code, reasonPhrase: head.status.reasonPhrase)
        var fields = head.headerFields
        fields[.date] = nil
        let headers = HTTPHeaders(fields)
        if forHead || head.status == .notModified || head.status == .noContent || head.status.kind == .informational {
            self.init(status: status, version: .http1_1, headersNoUpdate: headers, body: .empty)
            return
        }
        if let bytes = body.bufferedBytes {
            self.init(status: status, headers: headers, body: .init(buffer: allocator.buffer(bytes: bytes)))
            return
        }
        let count = head.headerFields[.contentLength].flatMap { Int($0) } ?? -1
        self.init(status: status, headers: headers, body: .init(managedAsyncStream: { writer in
            for try await chunk in body {
                try await writer.writeBuffer(allocator.buffer(bytes: chunk))
            }
        }, count: count, byteBufferAllocator: allocator))
    }
}
#endif  // Vapor
