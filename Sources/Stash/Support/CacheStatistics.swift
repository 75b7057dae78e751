/// Counters of a cache's lookups and evictions since it was created.
public struct CacheStatistics: Hashable, Sendable {
    /// Lookups that returned a value.
    public var hits: Int
    /// Lookups that returned `nil`, including those that found an expired entry.
    public var misses: Int
    /// Entries the cache dropped on its own: for a limit, expiry, memory
    /// pressure or discarded content (see ``EvictionReason/isEviction``).
    /// Removals and replacements by the caller are not counted.
    public var evictions: Int

    /// Creates a set of counters.
    public init(hits: Int = 0, misses: Int = 0, evictions: Int = 0) {
        self.hits = hits
        self.misses = misses
        self.evictions = evictions
    }

    /// `hits / (hits + misses)`, or 0 before the first lookup.
    public var hitRatio: Double {
        let lookups = hits + misses
        return lookups == 0 ? 0 : Double(hits) / Double(lookups)
    }
}
