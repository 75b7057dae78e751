#if OpenAPI
import Foundation
import HTTPTypes
import OpenAPIRuntime
import StashHTTP

/// A swift-openapi-runtime `ClientMiddleware` that puts a generated client's requests through an
/// ``HTTPCache`` (`StashHTTP`), so the client caches by HTTP semantics: what the API's responses
/// say with `Cache-Control`, `ETag`, `Last-Modified` and `Vary`.
///
/// ```swift
/// let cache = try HTTPCache(configuration: .init(mode: .private))
/// let client = Client(serverURL: try Servers.Server1.url(), transport: URLSessionTransport(),
///                     middlewares: [HTTPCacheClientMiddleware(cache: cache)])
/// let pets = try await client.listPets()   // a fresh stored response is served without the network
/// ```
///
/// The key is the server URL and the operation's path and query; the transport runs only when the
/// cache needs the origin (with `If-None-Match` or `If-Modified-Since` when it holds a validator).
/// Concurrent calls of one operation with one URL share one request; unsafe methods (`POST`,
/// `PUT`, `PATCH`, `DELETE`) go through and, on success, drop what is stored for their URL. Every
/// response carries `Cache-Status` (RFC 9211). Place it before middlewares that should run once
/// per network request (retries, authentication) and after those that should see every call.
///
/// - Important: A middleware's `next` cannot run once the call returns, so within
///   `stale-while-revalidate` a stale response is revalidated before it is returned, not after.
///
/// Thread-safe: a value type over the cache.
public struct HTTPCacheClientMiddleware: ClientMiddleware {
    /// The cache the responses are stored in.
    public let cache: HTTPCache
    /// How the calls use the cache. Defaults to `HTTPCachePolicy.useProtocolPolicy` (RFC 9111).
    public let policy: HTTPCachePolicy

    /// A middleware storing a client's responses in `cache`.
    ///
    /// - Parameters:
    ///   - cache: The cache; a client normally uses a private one (`HTTPCacheMode.private`, the default).
    ///   - policy: How every call uses the cache. Defaults to `.useProtocolPolicy`.
    public init(cache: HTTPCache, policy: HTTPCachePolicy = .useProtocolPolicy) {
        self.cache = cache
        self.policy = policy
    }

    /// Answers the call from the cache, or through `next` and stores what may be stored.
    public func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let keyed = Self.absolute(request, baseURL: baseURL)
        // `next` is called only while this call runs: revalidatesInBackground is false, so the cache
        // calls its origin (and so `next`) before it returns, never after.
        let answer = try await withoutActuallyEscaping(next) { next in
            try await cache.responseWithCacheStatus(for: keyed, policy: policy, revalidatesInBackground: false) { sent, _ in
                var forwarded = sent
                forwarded.scheme = request.scheme
                forwarded.authority = request.authority
                forwarded.path = request.path
                let (response, responseBody) = try await next(forwarded, body, baseURL)
                return (response, responseBody.map { HTTPCacheBody($0) } ?? HTTPCacheBody())
            }
        }
        return (answer.response, Self.body(of: answer))
    }

    /// `request` with the server URL's scheme and authority, and its path under the server URL's
    /// path: the URL the transport will ask for, which keys the cache.
    static func absolute(_ request: HTTPRequest, baseURL: URL) -> HTTPRequest {
        var keyed = request
        keyed.scheme = baseURL.scheme ?? "https"
        if let host = baseURL.host {
            keyed.authority = baseURL.port.map { "\(host):\($0)" } ?? host
        }
        var prefix = baseURL.path
        while prefix.hasSuffix("/") { prefix.removeLast() }
        keyed.path = prefix + (request.path ?? "/")
        return keyed
    }

    /// The answer's body as OpenAPIRuntime gives bodies: `nil` when empty.
    static func body(of answer: HTTPCacheResponse) -> HTTPBody? {
        if let bytes = answer.body.bufferedBytes {
            return bytes.isEmpty ? nil : HTTPBody(bytes)
        }
        let length = answer.response.headerFields[.contentLength].flatMap { Int64($0) }.map { HTTPBody.Length.known($0) } ?? .unknown
        return HTTPBody(answer.body, length: length, iterationBehavior: .single)
    }
}
#endif  // OpenAPI
