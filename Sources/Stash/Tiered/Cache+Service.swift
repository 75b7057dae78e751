#if ServiceLifecycle
import ServiceLifecycle

extension Cache: Service {
    /// Runs the cache as a swift-service-lifecycle service: suspends until graceful shutdown (or
    /// cancellation), then calls ``close(timeout:)`` with its default timeout (the remote tier's
    /// invalidations stop, the background changes finish or are reported, the memory and disk
    /// tiers close) and returns.
    ///
    /// Services stop in the reverse order of the group's list: put a remote tier and its client
    /// before the cache, so that the cache's last changes reach the tier before it closes.
    ///
    /// ```swift
    /// let group = ServiceGroup(services: [redis, redisTier, cache, server], logger: logger)
    /// ```
    ///
    /// Available with the `ServiceLifecycle` trait (off by default: `.package(url: ..., traits: ["ServiceLifecycle"])`).
    ///
    /// - Complexity: Suspends until shutdown, then as ``close(timeout:)``. Thread-safe.
    public func run() async throws {
        await runUntilGracefulShutdown { await close() }
    }
}
#endif  // ServiceLifecycle
