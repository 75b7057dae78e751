extension Cache {
    /// Shuts the cache down: stops receiving the remote tier's invalidations, waits for the work
    /// still running in the background (changes of the synchronous API on their way to the remote
    /// tier, invalidations being applied to the disk tier, repairs of keys whose shared copy is
    /// older than this instance's, refresh-ahead reloads), then closes the memory tier
    /// (``MemoryCache/close()``) and the disk tier (its `close() async`, which writes pending
    /// access times). What a server calls on shutdown; in a swift-service-lifecycle
    /// `ServiceGroup` the cache calls it itself on graceful shutdown.
    ///
    /// Nothing is lost without a word: when `timeout` passes first, or the calling task is
    /// cancelled, the number of tasks still running is logged (a warning), and so is the number of
    /// keys whose shared copy stays older than this instance's (writes that failed to reach the
    /// remote tier, or were left unsent past the limit of 10,000 changes in flight, and were not
    /// repaired):
    /// other instances may read those older copies until they expire. The tiers are closed either
    /// way.
    ///
    /// The remote tier is not closed: the cache does not own it (a client may serve several
    /// tiers); close it after the cache (in a `ServiceGroup`, list it before the cache, since
    /// services stop in reverse order). After `close`, calls that reach the disk tier throw
    /// ``StashError/Code/closed``; the memory tier keeps answering but no longer hears the
    /// remote tier's invalidations. Only the first call closes anything.
    ///
    /// - Parameter timeout: How long to wait for the subscription to stop and the background
    ///   work to end, on the tiers' clock (with a ``ManualClock``, only advancing it ends the
    ///   wait early). Defaults to 10 seconds.
    /// - Complexity: Suspends until the background work ends or `timeout` passes; the disk tier's
    ///   close blocks a thread of its queue on disk I/O, not the caller's. Thread-safe.
    public func close(timeout: Duration = .seconds(10)) async {
        await core.close(timeout: timeout)
    }

    /// The synchronous part of ``close(timeout:)``, for a shutdown that cannot suspend (Vapor's
    /// synchronous `app.shutdown()`): stops the subscription in the background and closes the
    /// memory and disk tiers without waiting for the background work, which then fails against
    /// the closed disk tier (logged) or goes on to the remote tier.
    package func closeWithoutWaiting() {
        core.closeWithoutWaiting()
    }
}
