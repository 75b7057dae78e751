#if ServiceLifecycle
import ServiceLifecycle

extension MemoryCache: Service {
    /// Runs the cache as a swift-service-lifecycle service: suspends until graceful shutdown (or
    /// cancellation), then calls ``close()`` (the auto-trim sweep and memory-pressure listening
    /// stop) and returns. The cache works before, during and after `run()`; running it only ties
    /// its background work to the service group's lifetime.
    ///
    /// ```swift
    /// let group = ServiceGroup(services: [cache, server], logger: logger)
    /// ```
    ///
    /// Available with the `ServiceLifecycle` trait (off by default: `.package(url: ..., traits: ["ServiceLifecycle"])`).
    ///
    /// - Complexity: Suspends until shutdown; O(1) after. Thread-safe; never blocks a thread.
    public func run() async throws {
        await runUntilGracefulShutdown { close() }
    }
}
#endif  // ServiceLifecycle
