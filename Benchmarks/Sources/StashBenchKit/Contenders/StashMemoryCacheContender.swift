import Stash


/// Stash's `MemoryCache<String, Int>`, called exactly as a user would.
public final class StashMemoryCacheContender: CacheUnderTest, Sendable {
    public static var displayName: String { "MemoryCache" }

    private let cache: MemoryCache<String, Int>
    private let keys: [String]

    public static func prepareKeys(_ keys: [String]) -> [String] { keys }

    public init(limits: CacheLimits, policy: PolicyName, keys: [String]) {
        self.keys = keys
        cache = MemoryCache(countLimit: limits.countLimit, costLimit: limits.costLimit, policy: policy.stashPolicy)
    }

    @inline(__always)
    public func get(_ index: Int) -> Int? {
        cache.value(forKey: keys[index])
    }

    @inline(__always)
    public func set(_ index: Int, cost: Int) {
        cache.setValue(index, forKey: keys[index], cost: cost)
    }
}

/// Replays a trace through a `MemoryCache<Int, Int>` with `countLimit = capacity`:
/// a lookup per request, a set on each miss. Returns the number of hits.
public func stashReplayHits(trace: [Int], capacity: Int, policy: PolicyName) -> Int {
    let cache = MemoryCache<Int, Int>(countLimit: capacity, policy: policy.stashPolicy)
    var hits = 0
    for key in trace {
        if cache.value(forKey: key) != nil {
            hits += 1
        } else {
            cache.setValue(key, forKey: key)
        }
    }
    return hits
}

extension PolicyName {
    public var stashPolicy: EvictionPolicy {
        switch self {
        case .lru: .lru
        case .fifo: .fifo
        case .lfu: .lfu
        case .s3fifo: .s3FIFO
        }
    }
}
