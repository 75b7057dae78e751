#if Vapor
import HTTPTypes
import NIOCore
import StashHTTP
import Vapor

/// An RFC 9111 response cache for a Vapor app's own routes: a `Middleware` on an
/// `HTTPCache` (normally in shared mode, as a reverse proxy's).
///
/// ```swift
/// let responses = try HTTPCache(configuration: .init(mode: .shared))
/// app.middleware.use(HTTPCacheMiddleware(cache: responses))      // or app.grouped(...) for some routes
/// app.lifecycle.use(HTTPCacheLifecycleHandler(cache: responses))  // closes it on shutdown
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
/// the route answers with a server error or throws one. An unsafe method (`POST`, `PUT`,
/// `DELETE`, ...) runs the route with the request as it came and, on success, removes what is
/// stored for its URL and its `Location`. Every response the cache answers carries a
/// `Cache-Status` field (RFC 9211); a request upgrading the connection (`Upgrade`, a WebSocket)
/// goes to the route without the cache.
///
/// A `GET` or `HEAD` runs the route with a copy of the request that has the cache's validators in
/// its headers: same URL, route parameters, peer certificate chain, `storage` (what an
/// authentication or session middleware put there), service context, and body if Vapor has
/// already collected it (a GET's streamed body is not carried); the client's request is left as
/// it came.
/// Routes that answer per user must say `private` or `Vary` accordingly, as behind any shared
/// cache; a shared cache never stores a `private` response, nor one to a request with
/// `Authorization` unless the response allows it.
///
/// A route that throws an `AbortError` with a client-error status (`Abort(.notFound)`) answers
/// with the response Vapor's default `ErrorMiddleware` makes of it, which the cache sees as the
/// route's answer (a definitive `404`, never covered by `stale-if-error`); any other error is an
/// error of the origin, passed on to the app's error middleware unless a stale response may be
/// served instead. Vapor writes its own `Date` on every response, so a stored response goes out
/// with the time it is served.
///
/// - Important: Vapor offers no way to read a streamed response body chunk by chunk from a
///   middleware: a route's streamed body (`Response.Body(asyncStream:)`, a file stream) is
///   collected whole before the cache sees it. Put the middleware on the route groups whose
///   responses it should cache, not in front of large downloads.
///
/// Thread-safe: a value type over the cache.
public struct HTTPCacheMiddleware: Middleware {
    /// The cache the responses are stored in.
    public let cache: HTTPCache

    /// The largest body of a fresh hit copied on the event loop: 64 KiB. A larger one is copied
    /// in a task, so that a hit of a few megabytes never holds up the event loop's other
    /// connections.
    public static let largestBodyAnsweredOnTheEventLoop = 64 << 10

    /// A middleware storing the routes' responses in `cache`.
    ///
    /// - Parameter cache: The cache; normally in `HTTPCacheMode.shared` mode. Several
    ///   middlewares (or apps) may share one. Close it with the app
    ///   (``HTTPCacheLifecycleHandler``), so that background revalidations finish while the app
    ///   can still run them.
    /// - Complexity: O(1).
    public init(cache: HTTPCache) {
        self.cache = cache
    }

    /// Answers `request` from the cache, or through `next` and stores what may be stored.
    ///
    /// A fresh response in memory of at most ``largestBodyAnsweredOnTheEventLoop`` bytes is
    /// answered on the request's event loop; anything else the cache answers in a task (Vapor's
    /// `AsyncMiddleware` would leave the event loop for every request). A request that upgrades
    /// the connection, or whose method is not a valid token, goes to `next` as it is.
    ///
    /// - Returns: A future of the answer; it fails with what the route throws (but a client
    ///   error), when no stored response may be served instead.
    /// - Complexity: A fresh memory hit is O(fields + body bytes) (the body is copied into a
    ///   `ByteBuffer`) and does not leave the event loop; a miss waits for the route and reads its
    ///   body whole.
    public func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        guard request.headers[.upgrade].isEmpty, let head = HTTPRequest(request) else {
            return next.respond(to: request)
        }
        if let hit = cache.freshResponseWithCacheStatus(for: head) {
            let forHead = head.method == .head, allocator = request.byteBufferAllocator
            guard (hit.body.bufferedBytes?.count ?? .max) <= Self.largestBodyAnsweredOnTheEventLoop else {
                return request.eventLoop.makeFutureWithTask { Response(hit.response, body: hit.body, forHead: forHead, allocator: allocator) }
            }
            return request.eventLoop.makeSucceededFuture(Response(hit.response, body: hit.body, forHead: forHead, allocator: allocator))
        }
        return request.eventLoop.makeFutureWithTask { try await respond(to: request, head: head, next: next) }
    }

    /// The cache's answer to `request`, running the route through `next` when it needs the origin.
    private func respond(to request: Request, head: HTTPRequest, next: any Responder) async throws -> Response {
        let safe = head.method == .get || head.method == .head
        let answer = try await cache.responseWithCacheStatus(for: head, policy: .useProtocolPolicy) { sent, _ in
            // A GET or HEAD may run again after the answer (a background revalidation), with the
            // cache's validators: a copy each time. An unsafe method runs once, before the answer.
            let response = try await Self.routeResponse(to: safe ? request.copy(sending: sent) : request, next: next)
            let body = try await response.body.collect(on: request.eventLoop).get()
            let bytes = head.method == .head ? [] : body.map { Array($0.readableBytesView) } ?? []
            return (try HTTPResponse(response), HTTPCacheBody(bytes: bytes))
        }
        return Response(answer.response, body: answer.body, forHead: head.method == .head, allocator: request.byteBufferAllocator)
    }

    /// The route's response to `request`; a client error it throws becomes the response Vapor's
    /// default error middleware makes of it.
    private static func routeResponse(to request: Request, next: any Responder) async throws -> Response {
        do {
            return try await next.respond(to: request).get()
        } catch let error as any AbortError where (400..<500).contains(error.status.code) {
            return try await ErrorMiddleware.default(environment: request.application.environment)
                .respond(to: request, chainingTo: Rethrowing(error: error)).get()
        }
    }
}

/// A responder that throws `error`: what the error middleware wraps to make its response.
private struct Rethrowing: AsyncResponder {
    let error: any Error
    func respond(to request: Request) async throws -> Response { throw error }
}
#endif  // Vapor
