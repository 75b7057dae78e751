#if Vapor
import StashHTTP
import Vapor

/// Closes an `HTTPCache` when the app shuts down: `app.lifecycle.use(HTTPCacheLifecycleHandler(cache: responses))`.
///
/// On `app.asyncShutdown()` it stops the HTTP server (no new requests), waits for the cache's
/// background revalidations (`stale-while-revalidate`, started by ``HTTPCacheMiddleware``), which
/// run routes while the app's storage and caches are still there, then closes the cache, writing
/// what is pending to its disk tier. Vapor runs lifecycle handlers in the reverse order of
/// registration: register this one after `app.caches.use(.stash(...))`, so that revalidating
/// routes can still use `req.cache`.
///
/// Thread-safe: a value type over the cache.
public struct HTTPCacheLifecycleHandler: LifecycleHandler {
    /// The cache closed on shutdown.
    public let cache: HTTPCache

    /// A handler that closes `cache` on shutdown.
    ///
    /// - Parameter cache: The cache; nothing else should close it.
    public init(cache: HTTPCache) {
        self.cache = cache
    }

    /// Stops the server, waits for background revalidations, then closes the cache.
    public func shutdownAsync(_ application: Application) async {
        await application.server.shutdown()
        await cache.close()
    }

    /// Stops the server and closes the cache, blocking (the blocking shutdown of an app made with
    /// `Application(_:)`).
    public func shutdown(_ application: Application) {
        application.server.shutdown()
        cache.close()
    }
}
#endif  // Vapor
