extension MemoryCache {
    /// Hit, miss and eviction counters since the cache was created.
    ///
    /// Kept under the cache's one lock, with the operations they count: keeping
    /// them adds no lock and no atomic operation.
    ///
    /// - Complexity: O(1). Thread-safe.
    public var statistics: CacheStatistics {
        core.statistics
    }

    /// A snapshot of the fresh entries, in eviction order: the entry that would
    /// be evicted next comes first.
    ///
    /// Taking it does not count as a read, so it changes no entry's recency or
    /// frequency. Later changes to the cache do not affect it.
    ///
    /// - Complexity: O(n) under the lock. Thread-safe.
    public func snapshot() -> [(key: Key, value: Value, cost: Int)] {
        core.snapshot()
    }

    /// The keys of the fresh entries, in eviction order: the key that would be
    /// evicted next comes first.
    ///
    /// - Complexity: O(n) under the lock. Thread-safe.
    public var keys: [Key] {
        snapshot().map(\.key)
    }
}

extension MemoryCache {
    /// Traps unless the engine's invariants hold (see
    /// `MemoryCacheStorage._checkInvariants()`). For tests, after each
    /// mutation; does nothing in release builds.
    ///
    /// - Complexity: O(n) under the lock in debug builds. Thread-safe.
    func _checkInvariants() {
        core.checkInvariants()
    }
}

extension MemoryCache: Sequence {
    /// Iterates over a ``snapshot()`` of the entries, in eviction order.
    ///
    /// The sequence's `underestimatedCount` is the default, 0, on purpose: the
    /// standard library's `map`, `Array(_:)` and friends take that many
    /// elements on trust, yet no count read before ``makeIterator()`` takes its
    /// snapshot can promise a lower bound. ``count`` includes expired entries
    /// the snapshot skips, and another thread may remove entries in between.
    ///
    /// - Complexity: O(n) to start, under the lock. Thread-safe.
    public func makeIterator() -> IndexingIterator<[(key: Key, value: Value, cost: Int)]> {
        snapshot().makeIterator()
    }
}
