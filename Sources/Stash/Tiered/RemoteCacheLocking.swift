/// A ``RemoteCacheTier`` with a fleet-wide lock per key: what lets ``Cache`` load a key that
/// every tier misses in one instance of the fleet while the others wait for its value
/// (``LoadOptions/fleetLockTTL``).
///
/// A capability of its own, so that a store with no atomic lock need not fake one (a
/// ``Cache`` over such a tier ignores ``LoadOptions/fleetLockTTL``: each instance loads a
/// missing key itself, once per instance). `RedisCacheTier` conforms (`SET NX PX` and a
/// release script that checks the holder's token).
///
/// Contract for conformers: at most one holder per key at a time across the fleet; a lock
/// expires by itself after its time to live, so that a crashed holder never blocks the fleet;
/// a release frees the lock only if this holder still has it.
///
/// Thread-safety: conformers are safe to call from any thread or task.
public protocol RemoteCacheLocking<Value>: RemoteCacheTier {
    /// A held fleet-wide lock, as ``acquireLock(forKey:ttl:)`` returns it.
    associatedtype FleetLock: Sendable

    /// Tries once, without waiting, to take the fleet-wide lock for loading `key`.
    ///
    /// - Parameters:
    ///   - key: The caller's key.
    ///   - ttl: How long the lock holds if never released.
    /// - Returns: The lock, or `nil` when another process holds it.
    /// - Throws: The store's error type when the store fails or is unreachable.
    func acquireLock(forKey key: String, ttl: Duration) async throws -> FleetLock?

    /// Releases a lock taken by ``acquireLock(forKey:ttl:)``, if it is still held.
    ///
    /// - Parameter lock: The lock.
    /// - Throws: The store's error type, also when the lock had expired.
    func releaseLock(_ lock: FleetLock) async throws
}
