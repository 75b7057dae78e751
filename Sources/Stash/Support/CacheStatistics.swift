/// Counters of a cache's lookups, evictions and loads since it was created:
/// the one statistics API of every tier.
///
/// A snapshot, taken by a tier's `statistics` property under the lock the
/// tier already holds for its lookups, so keeping the counters adds no lock to
/// a hit. The load counters stay 0 for a cache that never loads through
/// `value(forKey:orLoad:)`.
public struct CacheStatistics: Hashable, Sendable {
    /// Lookups that returned a value, including get-or-load calls answered
    /// from the cache.
    public var hits: Int
    /// Lookups that returned `nil`, including those that found an expired
    /// entry, and get-or-load calls that had to load.
    public var misses: Int
    /// Entries the cache dropped on its own: for a limit, expiry, memory
    /// pressure or discarded content (see ``EvictionReason/isEviction``).
    /// Removals and replacements by the caller are not counted.
    public var evictions: Int
    /// ``evictions`` by reason; a reason with none is absent. Defaults to empty.
    public var evictionsByReason: [EvictionReason: Int]
    /// Loads that returned a value (including refreshes).
    public var loadSuccesses: Int
    /// Loads that threw (including refreshes). A caller's own cancellation is
    /// not counted, nor is a caller's timeout: a timeout ends the caller's
    /// wait, not the load, whose own outcome is counted when it ends.
    public var loadFailures: Int
    /// Get-or-load misses of a `Cache` answered by another instance of the
    /// fleet (``LoadOptions/fleetLockTTL``): the value it loaded, read from
    /// the remote tier. Not counted in ``loadSuccesses``: this instance's
    /// loader did not run.
    public var fleetReads: Int
    /// Background reloads started because a hit found its entry older than
    /// ``LoadOptions/refreshAfter``.
    public var refreshes: Int
    /// Get-or-load calls answered with an expired value because the load
    /// failed, timed out or had failed recently (``LoadOptions/staleIfError``).
    public var staleValuesServed: Int
    /// How long loads took, successful or not.
    public var loadTimes: LoadTimeDistribution

    /// Creates a set of counters; each defaults to zero.
    public init(
        hits: Int = 0,
        misses: Int = 0,
        evictions: Int = 0,
        evictionsByReason: [EvictionReason: Int] = [:],
        loadSuccesses: Int = 0,
        loadFailures: Int = 0,
        fleetReads: Int = 0,
        refreshes: Int = 0,
        staleValuesServed: Int = 0,
        loadTimes: LoadTimeDistribution = LoadTimeDistribution()
    ) {
        self.hits = hits
        self.misses = misses
        self.evictions = evictions
        self.evictionsByReason = evictionsByReason
        self.loadSuccesses = loadSuccesses
        self.loadFailures = loadFailures
        self.fleetReads = fleetReads
        self.refreshes = refreshes
        self.staleValuesServed = staleValuesServed
        self.loadTimes = loadTimes
    }

    /// These counters with `other`'s evictions added, by reason too: how a cache made of tiers
    /// (``Cache``, StashHTTP's `HTTPCache`) reports its tiers' evictions as its own.
    package func addingEvictions(of other: CacheStatistics) -> CacheStatistics {
        var sum = self
        sum.evictions += other.evictions
        sum.evictionsByReason.merge(other.evictionsByReason, uniquingKeysWith: +)
        return sum
    }

    /// `hits / (hits + misses)`, or 0 before the first lookup.
    public var hitRatio: Double {
        let lookups = hits + misses
        return lookups == 0 ? 0 : Double(hits) / Double(lookups)
    }
}
