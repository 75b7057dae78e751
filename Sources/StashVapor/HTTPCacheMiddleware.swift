#if Vapor
import HTTPTypes
import NIOCore
import Stash
import StashHTTP
import Vapor

/// An RFC 9111 response cache for a Vapor app's own routes: an `AsyncMiddleware` on an
/// `HTTPCache` (normally in shared mode, as a reverse proxy's).
///
/// ```swift
/// let responses = try HTTPCache(configuration: .init(mode: .shared))
/// app.middleware.use(HTTPCacheMiddleware(cache: responses))      // or app.grouped(...) for some routes
/// app.get("report") { _ in
///     let response = Response(body: .init(string: report()))
///     response.headers.replaceOrAdd(name: .cacheControl, value: "max-age=60, stale-while-revalidate=30")
///     response.headers.replaceOrAdd(name: .eTag, value: "\"v7\"")
///     return response
/// }
/// ```
///
/// The routes behind it run only when the cache needs the origin: a response is stored and served
/// by its own `Cache-Control`, `Expires`, `Vary`, `ETag` and `Last-Modified`, exactly as
/// `stash-proxy` does (the same engine). A conditional request (`If-None-Match`,
/// `If-Modified-Since`) that a stored response satisfies gets a `304` without running the route;
/// concurrent misses of one URL run the route once; a stale response is revalidated with the
/// route (which sees the validators and may answer `304`): within `stale-while-revalidate` after
/// the answer, in the background, otherwise before it; within `stale-if-error` it is served when
/// the route throws or answers with a server error. An unsafe method (`POST`, `PUT`, `DELETE`,
/// ...) runs the route and, on success, removes what is stored for its URL and its `Location`.
/// Every response carries a `Cache-Status` field (RFC 9211).
///
/// The route sees the request it was sent, with the cache's validators in its headers. A
/// background revalidation runs the route with a copy of the request: same method, URL, headers,
/// route parameters and collected body, but not the original's `storage` (so not what an
/// authentication or session middleware put there). Routes that answer per user must say
/// `private` or `Vary` accordingly, as behind any shared cache; a shared cache never stores a
/// `private` response, nor one to a request with `Authorization` unless the response allows it.
///
/// - Important: Vapor offers no way to read a streamed response body chunk by chunk from a
///   middleware: a route's streamed body (`Response.Body(asyncStream:)`, a file stream) is
///   collected whole before the cache sees it. Put the middleware on the route groups whose
///   responses it should cache, not in front of large downloads.
///
/// Thread-safe: a value type over the cache.
public struct HTTPCacheMiddleware: AsyncMiddleware {
    /// The cache the responses are stored in.
    public let cache: HTTPCache

    /// A middleware storing the routes' responses in `cache`.
    ///
    /// - Parameter cache: The cache; normally in `HTTPCacheMode.shared` mode. Several
    ///   middlewares (or apps) may share one; close it after the app has shut down
    ///   (`HTTPCache.close() async`) to wait for background revalidations.
    /// - Complexity: O(1).
    public init(cache: HTTPCache) {
        self.cache = cache
    }

    /// Answers `request` from the cache, or through `next` and stores what may be stored.
    ///
    /// - Throws: What the route throws, when no stored response may be served instead.
    /// - Complexity: A fresh memory hit is O(fields) and does not suspend; a miss waits for the
    ///   route and reads its body whole.
    public func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let answered = AnswerFlag()
        let answer = try await cache.responseWithCacheStatus(for: HTTPRequest(request), policy: .useProtocolPolicy) { sent, _ in
            // Before the answer, the route runs with the request itself (its storage holds what
            // earlier middleware put there); after it (a background revalidation), with a copy.
            let routed = answered.isSet ? request.copy(sending: sent) : request.sending(sent)
            let response = try await next.respond(to: routed)
            let body = try await response.body.collect(on: request.eventLoop).get()
            return (HTTPResponse(response), HTTPCacheBody(bytes: body.map { Array($0.readableBytesView) } ?? []))
        }
        answered.set()
        return Response(answer.response, body: answer.body, allocator: request.byteBufferAllocator)
    }
}

/// Whether a request has been answered: set once, read from the cache's origin calls.
private final class AnswerFlag: Sendable {
    private let value = LockedValue(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}
#endif  // Vapor
