#if Hummingbird
import Hummingbird
import StashHTTP

/// An `HTTPResponder` that answers through an `HTTPCache`, running a wrapped responder (normally
/// the app's router) as the origin: ``HTTPCacheMiddleware`` with background revalidation.
///
/// ```swift
/// let cache = try HTTPCache(configuration: .init(mode: .shared))
/// let responder = HTTPCacheResponder(responder: router.buildResponder(), cache: cache)
/// let app = Application(responder: responder, configuration: .init(address: .hostname("127.0.0.1", port: 8080)))
/// ```
///
/// Within `stale-while-revalidate`, the stale response is served at once and the wrapped
/// responder runs again in the background, with the request's context, to refresh it; otherwise
/// it behaves as ``HTTPCacheMiddleware``. `HTTPCache.close() async` waits for background
/// revalidations: call it on shutdown.
///
/// Thread-safe: a value type over the cache and the wrapped responder.
public struct HTTPCacheResponder<Responder: HTTPResponder>: HTTPResponder where Responder.Context: RequestContext {
    /// The responder that answers what the cache cannot.
    public let responder: Responder
    /// The cache the responses are stored in.
    public let cache: HTTPCache
    /// Whether each response also carries its `Date` in the field ``StoredDateChannelHandler``
    /// moves back into `Date`.
    public let keepsStoredDate: Bool

    /// A responder answering through `cache`, with `responder` as the origin.
    ///
    /// - Parameters:
    ///   - responder: The app's responder, such as `router.buildResponder()`.
    ///   - cache: The cache; normally in `HTTPCacheMode.shared` mode.
    ///   - keepsStoredDate: Whether a response goes out with its stored `Date` instead of the
    ///     current one; `true` needs ``StoredDateChannelHandler`` in the server's pipeline.
    ///     Default `false`: Hummingbird's `Date`, the time the response is sent.
    public init(responder: Responder, cache: HTTPCache, keepsStoredDate: Bool = false) {
        self.responder = responder
        self.cache = cache
        self.keepsStoredDate = keepsStoredDate
    }

    /// Answers `request` from the cache, or through the wrapped responder.
    @Sendable public func respond(to request: Request, context: Responder.Context) async throws -> Response {
        try await CachingResponse.respond(
            to: request, context: context, cache: cache, revalidatesInBackground: true, keepsStoredDate: keepsStoredDate,
            route: { [responder] request, context in try await responder.respond(to: request, context: context) })
    }
}
#endif  // Hummingbird
