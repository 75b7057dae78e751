extension Cache {
    /// Shuts the cache down: stops receiving the remote tier's invalidations, waits for the work
    /// still running in the background (changes of the synchronous API on their way to the remote
    /// tier, invalidations being applied to the disk tier, repairs of keys whose shared copy is
    /// older than this instance's), then closes the memory tier (``MemoryCache/close()``) and the
    /// disk tier (``DiskCache/close()``, which writes pending access times). What a server calls
    /// on shutdown; in a swift-service-lifecycle `ServiceGroup` the cache calls it itself on
    /// graceful shutdown.
    ///
    /// Nothing is lost without a word: when `timeout` passes first, the number of changes still
    /// running is logged (a warning), and so is the number of keys whose shared copy stays older
    /// than this instance's (writes that failed to reach the remote tier and were not repaired):
    /// other instances may read those older copies until they expire.
    ///
    /// The remote tier is not closed: the cache does not own it (several caches may share a
    /// client); close it after the cache (in a `ServiceGroup`, list it before the cache, since
    /// services stop in reverse order). After `close`, calls that reach the disk tier throw
    /// ``StashError/Code/closed``; the memory tier keeps answering. Calling it again closes nothing
    /// more.
    ///
    /// - Parameter timeout: How long to wait for the background work, on the tiers' clock.
    ///   Defaults to 10 seconds.
    /// - Complexity: Suspends until the background work ends or `timeout` passes; the disk tier's
    ///   close blocks a thread of its queue on disk I/O, not the caller's. Thread-safe.
    public func close(timeout: Duration = .seconds(10)) async {
        await remoteLink?.close()
        if !(await background.waitUntilIdle(timeout: timeout, clock: clock)) {
            logger.warning(
                "closing the cache: background changes had not finished; they may not reach the remote tier",
                metadata: ["running": "\(background.count)", "timeout": "\(timeout)"])
        }
        if let remoteLink {
            switch remoteLink.staleKeyCount {
            case nil:
                logger.warning("closing the cache: the remote tier is distrusted (a removeAll failed there); other instances may read older copies")
            case let count? where count > 0:
                logger.warning(
                    "closing the cache: keys whose shared copy is older than this instance's were not repaired; other instances may read them until they expire",
                    metadata: ["keys": "\(count)"])
            default:
                break
            }
        }
        memory?.close()
        await disk?.close()
    }
}
