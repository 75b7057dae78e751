extension MemoryCache {
    /// Hit, miss and eviction counters since the cache was created.
    ///
    /// Kept under the cache's one lock, with the operations they count: keeping
    /// them adds no lock and no atomic operation.
    ///
    /// - Complexity: O(1). Thread-safe.
    public var statistics: CacheStatistics {
        core.lock.withLock {
            CacheStatistics(hits: core.storage.hits, misses: core.storage.misses, evictions: core.storage.evictions)
        }
    }

    /// A snapshot of the fresh entries, in eviction order: the entry that would
    /// be evicted next comes first.
    ///
    /// Taking it does not count as a read, so it changes no entry's recency or
    /// frequency. Later changes to the cache do not affect it.
    ///
    /// - Complexity: O(n) under the lock. Thread-safe.
    public func snapshot() -> [(key: Key, value: Value, cost: Int)] {
        core.lock.withLock { core.storage.snapshot() }
    }

    /// The keys of the fresh entries, in eviction order: the key that would be
    /// evicted next comes first.
    ///
    /// - Complexity: O(n) under the lock. Thread-safe.
    public var keys: [Key] {
        snapshot().map(\.key)
    }
}

extension MemoryCache: Sequence {
    /// Iterates over a ``snapshot()`` of the entries, in eviction order.
    ///
    /// - Complexity: O(n) to start, under the lock. Thread-safe.
    public func makeIterator() -> IndexingIterator<[(key: Key, value: Value, cost: Int)]> {
        snapshot().makeIterator()
    }

    /// The number of entries, including expired ones not yet swept.
    public var underestimatedCount: Int { count }
}
