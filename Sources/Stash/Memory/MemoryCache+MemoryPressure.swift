extension MemoryCache {
    /// Whether the cache empties itself when memory runs short. Defaults to `true`.
    ///
    /// The signal comes from ``MemoryPressureMonitor/shared`` (Linux PSI and
    /// cgroup limits; the dispatch memory-pressure source and UIKit's memory
    /// warnings on Apple platforms), or from ``handleMemoryPressure()``. Entries
    /// go with reason ``EvictionReason/memoryPressure``. When false, pressure
    /// only removes expired entries and asks ``DiscardableContent`` values to
    /// discard their content.
    ///
    /// - Complexity: O(1). Thread-safe.
    public var removesAllOnMemoryPressure: Bool {
        get { core.removesAllOnMemoryPressure }
        set { core.removesAllOnMemoryPressure = newValue }
    }

    /// Whether the cache empties itself when the app enters the background.
    /// Defaults to `true` on iOS, tvOS and visionOS, `false` elsewhere; only
    /// UIKit platforms send the signal.
    ///
    /// - Complexity: O(1). Thread-safe.
    public var removesAllOnEnteringBackground: Bool {
        get { core.removesAllOnEnteringBackground }
        set { core.removesAllOnEnteringBackground = newValue }
    }

    /// Tells the cache that memory is short, as the automatic sources do.
    ///
    /// For apps that get their own signal (a container orchestrator, a custom
    /// watchdog). Empties the cache if ``removesAllOnMemoryPressure`` is true;
    /// otherwise removes expired entries and discards what content it can.
    ///
    /// - Complexity: O(1) under the lock when emptying, O(n) in batches
    ///   otherwise. Thread-safe.
    public func handleMemoryPressure() {
        core.didReceiveMemoryPressure()
    }
}

extension MemoryCacheCore: MemoryPressureObserver {
    func didReceiveMemoryPressure() {
        if removesAllOnMemoryPressure {
            logger.debug("memory pressure: removing all entries", metadata: ["cache": "\(name)"])
            removeAll(reason: .memoryPressure)
        } else {
            discardContent()
            removeStaleEntries()
        }
    }

    func didEnterBackground() {
        if removesAllOnEnteringBackground {
            removeAll(reason: .memoryPressure)
        }
    }

    /// Asks every ``DiscardableContent`` value to discard its content, outside the lock.
    private func discardContent() {
        guard storage.checksDiscardable else { return }
        let values = snapshot().map(\.value)
        for value in values {
            (value as? any DiscardableContent)?.discardContentIfPossible()
        }
    }
}
