#if Vapor
import Logging
import Stash
import Vapor

extension Application.Caches.Provider {
    /// A ``StashVaporCache`` on a bounded memory cache of its own: `app.caches.use(.stash())`.
    ///
    /// - Parameters:
    ///   - countLimit: The most values in memory. Strict. Defaults to 100 000.
    ///   - costLimit: The most bytes of values in memory, counted as their JSON and a 9-byte
    ///     header. Strict. Defaults to 64 MiB.
    /// - Complexity: O(1); the cache is made when the provider is used.
    public static func stash(countLimit: Int = 100_000, costLimit: Int = 64 << 20) -> Self {
        .init { app in
            let memory = MemoryCache<String, JSONRecord>(configuration: .init(
                label: "StashVaporCache", countLimit: countLimit, costLimit: costLimit, logger: app.logger))
            // Cache.init throws only when every tier is nil: this one has a memory tier.
            let cache = try! Stash.Cache(memory: memory, disk: nil, cost: { record, _ in record.byteCount }, logger: app.logger)
            app.caches.use(.stash(cache))
        }
    }

    /// A ``StashVaporCache`` on `cache`, which may have any tiers (memory, disk, Redis):
    /// `app.caches.use(.stash(cache))`.
    ///
    /// The app then owns the cache: on shutdown (`app.asyncShutdown()`) a `LifecycleHandler`
    /// stops the HTTP server (so that no request in flight finds the cache closed), then closes
    /// it (`Cache.close(timeout:)`: its changes on their way to Redis finish, its tiers close;
    /// the synchronous `app.shutdown()` stops its subscription and closes the memory and disk
    /// tiers without waiting for its background work). A Redis
    /// tier and its client stay the caller's, to close after the app has shut down.
    ///
    /// - Parameter cache: The cache. Give its disk and Redis tiers `DiskCodec.jsonRecord`.
    /// - Complexity: O(1).
    public static func stash(_ cache: Stash.Cache<JSONRecord>) -> Self {
        .init { app in
            app.storage[StashCacheKey.self] = cache
            app.lifecycle.use(StashCacheLifecycle(cache: cache))
            app.caches.use { app in StashVaporCache(cache: cache, on: app.eventLoopGroup.next()) }
        }
    }
}

extension Application.Caches {
    /// The ``StashVaporCache`` of `app.caches.use(.stash(...))`, as its own type (without a
    /// future on its async calls). It stays reachable after another provider is chosen with
    /// `app.caches.use`.
    ///
    /// - Precondition: A `.stash` provider was used; stops the process otherwise, as `app.cache`
    ///   does when no cache is configured.
    public var stash: StashVaporCache {
        guard let cache = application.storage[StashCacheKey.self] else {
            fatalError("No Stash cache is configured: call app.caches.use(.stash(...)) first")
        }
        return StashVaporCache(cache: cache, on: application.eventLoopGroup.next())
    }
}

/// Where the app keeps the cache of its `.stash` provider.
private struct StashCacheKey: StorageKey {
    typealias Value = Stash.Cache<JSONRecord>
}

/// Stops the server, then closes the cache, when the app shuts down.
private struct StashCacheLifecycle: LifecycleHandler {
    let cache: Stash.Cache<JSONRecord>

    func shutdownAsync(_ application: Application) async {
        await application.server.shutdown()
        await cache.close()
    }

    func shutdown(_ application: Application) {
        application.server.shutdown()
        cache.closeWithoutWaiting()
    }
}
#endif  // Vapor
