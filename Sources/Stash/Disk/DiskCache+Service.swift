#if ServiceLifecycle
import ServiceLifecycle

extension DiskCache: Service {
    /// Runs the cache as a swift-service-lifecycle service: suspends until graceful shutdown (or
    /// cancellation), then closes it (`close() async`: pending access times are written, and a
    /// consistency check under way finishes first) and returns. The cache works until then;
    /// afterwards every call throws ``StashError/Code/closed``.
    ///
    /// ```swift
    /// let group = ServiceGroup(services: [disk, server], logger: logger)  // stops in reverse order
    /// ```
    ///
    /// Available with the `ServiceLifecycle` trait (off by default: `.package(url: ..., traits: ["ServiceLifecycle"])`).
    ///
    /// - Complexity: Suspends until shutdown; then one transaction on the cache's own queue.
    ///   Thread-safe; never blocks the calling thread.
    public func run() async throws {
        await runUntilGracefulShutdown { await close() }
    }
}
#endif  // ServiceLifecycle
