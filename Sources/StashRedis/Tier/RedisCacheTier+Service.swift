#if Redis && ServiceLifecycle
import ServiceLifecycle
import Stash

extension RedisCacheTier: Service {
    /// Runs the tier as a swift-service-lifecycle service: suspends until graceful shutdown (or
    /// cancellation), then calls ``close()`` (the invalidation subscription stops; the client,
    /// which may serve other tiers, stays open) and returns.
    ///
    /// Services stop in the reverse order of the group's list: put the tier after its client and
    /// before the caches that use it.
    ///
    /// ```swift
    /// let group = ServiceGroup(services: [redis, redisTier, cache, server], logger: logger)
    /// ```
    ///
    /// Available with the `Redis` and `ServiceLifecycle` traits (both off by default: `.package(url: ..., traits: ["Redis", "ServiceLifecycle"])`).
    ///
    /// - Complexity: Suspends until shutdown, then until the subscription has stopped. Thread-safe.
    public func run() async throws {
        await runUntilGracefulShutdown { await close() }
    }
}
#endif  // Redis && ServiceLifecycle
