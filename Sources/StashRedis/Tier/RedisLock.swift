#if Redis
/// A held distributed lock on one key, with its fencing token.
///
/// Returned by ``RedisCacheTier/acquireLock(forKey:ttl:)``. The lock
/// expires by itself after its time to live, so a crashed holder never blocks
/// the fleet; release it with ``RedisCacheTier/releaseLock(_:)``. The fencing
/// token grows with every acquisition of the same key, so a store that
/// remembers the highest token it has seen can refuse a write from a holder
/// whose lock expired and was taken by another.
///
/// Thread-safety: a value type, `Sendable`.
public struct RedisLock: Sendable, Hashable {
    /// The caller's key the lock is for.
    public let key: String
    /// A number larger than every earlier holder's for this key.
    public let fencingToken: Int64
    /// The Redis key that holds the lock.
    let lockKey: String
}
#endif  // Redis
