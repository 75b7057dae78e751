#if ServiceLifecycle
import ServiceLifecycle

/// The `run()` of every Stash type that is a swift-service-lifecycle `Service`: suspends until the
/// service group shuts down gracefully (or the task is cancelled), then runs `close`, the type's
/// own shutdown, so that a service's `run()` returns only once it has closed.
package func runUntilGracefulShutdown(then close: () async -> Void) async {
    try? await gracefulShutdown()
    await close()
}
#endif  // ServiceLifecycle
