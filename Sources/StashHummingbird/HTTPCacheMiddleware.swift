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
/// Hummingbird's `Application` writes the current `Date` on every response; to send a stored
/// response with its own `Date`, as RFC 9110 asks of a cache, pass `keepsStoredDate: true` and put a
/// ``StoredDateChannelHandler`` in the server's pipeline.
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

    /// Whether each response also carries its `Date` in the field ``StoredDateChannelHandler``
    /// moves back into `Date`.
    public let keepsStoredDate: Bool

    /// A middleware storing the routes' responses in `cache`.
    ///
    /// - Parameters:
    ///   - cache: The cache; normally in `HTTPCacheMode.shared` mode. Several middlewares (or
    ///     apps) may share one.
    ///   - keepsStoredDate: Whether a response goes out with its stored `Date` instead of the
    ///     current one; `true` needs ``StoredDateChannelHandler`` in the server's pipeline (see
    ///     there). Default `false`: Hummingbird's `Date`, the time the response is sent.
    public init(cache: HTTPCache, keepsStoredDate: Bool = false) {
        self.cache = cache
        self.keepsStoredDate = keepsStoredDate
    }

    /// Answers `request` from the cache, or through `next` and stores what may be stored.
    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // `next` is called only while this call runs: revalidatesInBackground is false, so the
        // cache calls its origin (and so `next`) before it returns, never after.
        try await withoutActuallyEscaping(next) { next in
            let route = UncheckedSendableRoute(run: next)
            return try await CachingResponse.respond(
                to: request, context: context, cache: cache, revalidatesInBackground: false,
                keepsStoredDate: keepsStoredDate,
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
