/// The floor: a `Dictionary<String, Int>` behind a pthread mutex. No limits, no
/// eviction, no bookkeeping: what no cache can beat by much, only approach.
public final class LockedDictionaryContender: CacheUnderTest, @unchecked Sendable {
    // @unchecked Sendable: `storage` is only touched with `lock` held.
    public static var displayName: String { "Dictionary+lock" }

    private let lock = PThreadLock()
    private var storage: [String: Int] = [:]
    private let keys: [String]

    public static func prepareKeys(_ keys: [String]) -> [String] { keys }

    public init(limits: CacheLimits, policy: PolicyName, keys: [String]) {
        self.keys = keys
    }

    @inline(__always)
    public func get(_ index: Int) -> Int? {
        let key = keys[index]
        return lock.withLock { storage[key] }
    }

    @inline(__always)
    public func set(_ index: Int, cost: Int) {
        let key = keys[index]
        lock.withLock { storage[key] = index }
    }

    public var count: Int { lock.withLock { storage.count } }
}
