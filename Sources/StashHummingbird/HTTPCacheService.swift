#if Hummingbird
import Hummingbird
import ServiceLifecycle
import StashHTTP

/// An `HTTPCache` in an app's service group: on graceful shutdown it waits for the cache's
/// background revalidations (`stale-while-revalidate`, started by ``HTTPCacheResponder``) and
/// closes the cache, writing what is pending to its disk tier.
///
/// ```swift
/// var app = Application(responder: HTTPCacheResponder(responder: router.buildResponder(), cache: cache))
/// app.addServices(HTTPCacheService(cache: cache))
/// ```
///
/// Thread-safe: a value type over the cache.
public struct HTTPCacheService: Service {
    /// The cache closed on shutdown.
    public let cache: HTTPCache

    /// A service that closes `cache` on graceful shutdown.
    ///
    /// - Parameter cache: The cache; nothing else should close it.
    public init(cache: HTTPCache) {
        self.cache = cache
    }

    /// Waits for graceful shutdown (or cancellation), then closes the cache (`HTTPCache.close() async`).
    public func run() async throws {
        try? await gracefulShutdown()
        await cache.close()
    }
}
#endif  // Hummingbird
