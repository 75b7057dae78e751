#if STASH_BENCH_STAND_IN
// TEMPORARY, until Stash's MemoryCache lands on main: a stand-in with its API,
// so that the runner can be built and tried end to end. Built only with the
// STASH_BENCH_STAND_IN define; delete after merging main.
public struct EvictionPolicy: Hashable, Sendable {
    let name: String
    public static let lru = EvictionPolicy(name: "lru")
    public static let fifo = EvictionPolicy(name: "fifo")
    public static let lfu = EvictionPolicy(name: "lfu")
}

public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: @unchecked Sendable {
    private let lock = PThreadLock()
    private var lru: ReferenceLRU<Key>
    private var values: [Key: Value] = [:]
    private let countLimit: Int

    public init(name: String = "", countLimit: Int = .max, costLimit: Int = .max, policy: EvictionPolicy = .lru) {
        self.countLimit = countLimit
        lru = ReferenceLRU(capacity: min(countLimit, 1 << 40))
    }

    public func value(forKey key: Key) -> Value? {
        lock.withLock {
            guard let value = values[key] else { return nil }
            _ = lru.access(key)
            return value
        }
    }

    public func setValue(_ value: Value, forKey key: Key, cost: Int = 0, ttl: Duration? = nil) {
        lock.withLock {
            values[key] = value
            _ = lru.access(key)
        }
    }
}
#endif
