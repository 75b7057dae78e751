#if Hummingbird
import Hummingbird
import StashHTTP

/// An RFC 9111 response cache for a Hummingbird app's own routes: a `RouterMiddleware` on an
/// `HTTPCache` (normally in shared mode, as a reverse proxy's).
///
/// ```swift
/// let cache = try HTTPCache(configuration: .init(mode: .shared))
/// let router = Router()
/// router.add(middleware: HTTPCacheMiddleware(cache: cache))
/// router.get("/report") { _, _ in
///     var response = Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: report())))
///     response.headers[.cacheControl] = "max-age=60, stale-if-error=600"
///     response.headers[.eTag] = "\"v7\""
///     return response
/// }
/// ```
///
/// The routes below it run only when the cache needs the origin: a response is stored and served
/// by its own `Cache-Control`, `Expires`, `Vary`, `ETag` and `Last-Modified`, exactly as
/// `stash-proxy` does (the same engine). A conditional request (`If-None-Match`,
/// `If-Modified-Since`) that a stored response satisfies gets a `304` without running the route;
/// concurrent misses of one URL run the route once; a stale response is revalidated with the
/// route (which sees the validators and may answer `304`), or served within `stale-if-error`
/// when the route throws; an unsafe method (`POST`, `PUT`, `DELETE`, ...) runs the route and, on
/// success, removes what is stored for its URL and its `Location`. Every response carries a
/// `Cache-Status` field (RFC 9211).
///
/// - Important: A middleware's `next` cannot run once the request is answered, so within
///   `stale-while-revalidate` this middleware revalidates before answering instead of after.
///   For background revalidation, wrap the router's responder in ``HTTPCacheResponder`` instead.
///
/// Routes that answer per user (a session cookie, `Authorization`) must say `private` or `Vary`
/// accordingly, as they would behind any shared cache; a shared cache never stores a `private`
/// response, nor one to a request with `Authorization` unless the response allows it.
///
/// Thread-safe: a value type over the cache.
public struct HTTPCacheMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The cache the responses are stored in.
    public let cache: HTTPCache

    /// A middleware storing the routes' responses in `cache`.
    ///
    /// - Parameter cache: The cache; normally in `HTTPCacheMode.shared` mode. Several
    ///   middlewares (or apps) may share one.
    public init(cache: HTTPCache) {
        self.cache = cache
    }

    /// Answers `request` from the cache, or through `next` and stores what may be stored.
    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // `next` is called only while this call runs: revalidatesInBackground is false, so the
        // cache calls its origin (and so `next`) before it returns, never after.
        try await withoutActuallyEscaping(next) { next in
            let route = UncheckedSendableRoute(run: next)
            return try await CachingResponse.respond(
                to: request, context: context, cache: cache, revalidatesInBackground: false,
                route: { request, context in try await route.run(request, context) })
        }
    }
}

/// `next`, passed to the cache as the `@Sendable` origin it asks for.
private struct UncheckedSendableRoute<Context>: @unchecked Sendable {
    // @unchecked Sendable: a middleware's `next` may be called from whichever task runs the
    // request, and the cache calls it at most once, from the task of this request (or of a
    // concurrent request of the same URL that waits for it), while `handle` is running.
    let run: (Request, Context) async throws -> Response
}
#endif  // Hummingbird
