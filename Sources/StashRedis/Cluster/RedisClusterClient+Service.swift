#if Redis && ServiceLifecycle
import ServiceLifecycle
import Stash

extension RedisClusterClient: Service {
    /// Runs the client as a swift-service-lifecycle service, which then owns its connections to every node of the cluster:
    /// suspends until graceful shutdown (or cancellation), then calls ``close()`` (commands under
    /// way fail with ``RedisError/Code/connectionClosed``) and returns. The client works before that.
    ///
    /// Services stop in the reverse order of the group's list: put the client before the tiers
    /// and caches that use it, so that it closes last.
    ///
    /// ```swift
    /// let group = ServiceGroup(services: [redis, redisTier, cache, server], logger: logger)
    /// ```
    ///
    /// Available with the `Redis` and `ServiceLifecycle` traits (both off by default: `.package(url: ..., traits: ["Redis", "ServiceLifecycle"])`).
    ///
    /// - Complexity: Suspends until shutdown, then until the connections have closed. Thread-safe.
    public func run() async throws {
        await runUntilGracefulShutdown { await close() }
    }
}
#endif  // Redis && ServiceLifecycle
