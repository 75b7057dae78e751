/// How many entries a tier evicted, by reason: the counters behind
/// ``CacheStatistics/evictions`` and ``CacheStatistics/evictionsByReason``.
/// Kept by ``EntryTable`` and by the disk tier's core under the lock each
/// already holds, so counting adds no lock.
@usableFromInline
struct EvictionCounts {
    @usableFromInline var countLimit = 0
    @usableFromInline var costLimit = 0
    @usableFromInline var expired = 0
    @usableFromInline var memoryPressure = 0
    @usableFromInline var discarded = 0
    @usableFromInline var freeDiskSpace = 0

    @inlinable
    init() {}

    /// Counts `count` evictions for `reason`; removals by the caller are not counted.
    @inlinable
    mutating func record(_ reason: EvictionReason, count: Int = 1) {
        switch reason.kind {
        case .countLimit: countLimit &+= count
        case .costLimit: costLimit &+= count
        case .expired: expired &+= count
        case .memoryPressure: memoryPressure &+= count
        case .discarded: discarded &+= count
        case .freeDiskSpace: freeDiskSpace &+= count
        case .removed, .replaced, .removeAll: break
        }
    }

    /// Every eviction, whatever its reason.
    var total: Int { countLimit &+ costLimit &+ expired &+ memoryPressure &+ discarded &+ freeDiskSpace }

    /// The reasons with at least one eviction.
    var byReason: [EvictionReason: Int] {
        let all: [(EvictionReason, Int)] = [
            (.countLimit, countLimit), (.costLimit, costLimit), (.expired, expired),
            (.memoryPressure, memoryPressure), (.discarded, discarded), (.freeDiskSpace, freeDiskSpace),
        ]
        return Dictionary(uniqueKeysWithValues: all.filter { $0.1 > 0 })
    }
}
