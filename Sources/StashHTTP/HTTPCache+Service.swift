#if ServiceLifecycle
import ServiceLifecycle
import Stash

extension HTTPCache: Service {
    /// Runs the cache as a swift-service-lifecycle service: suspends until graceful shutdown (or
    /// cancellation), then calls `close() async` (the background revalidations of
    /// `stale-while-revalidate` responses finish, for at most 10 seconds, pending state is written
    /// and the disk tier closes) and returns.
    ///
    /// ```swift
    /// let group = ServiceGroup(services: [responses, server], logger: logger)
    /// ```
    ///
    /// Available with the `ServiceLifecycle` trait (off by default: `.package(url: ..., traits: ["ServiceLifecycle"])`).
    ///
    /// - Complexity: Suspends until shutdown, then until the revalidations end; the disk tier's
    ///   close blocks on disk I/O. Thread-safe.
    public func run() async throws {
        await runUntilGracefulShutdown { await close() }
    }
}
#endif  // ServiceLifecycle
