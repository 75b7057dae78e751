/// A cache tier shared by several processes: what ``Cache`` calls to read,
/// write and remove in a remote store.
///
/// This is the seam between ``Cache`` (memory → disk → remote) and a remote
/// store, so that the core builds no networking code. `RedisCacheTier`, in the
/// `StashRedis` product, is the Redis implementation. Hand one to a cache with
/// ``Cache/init(memory:disk:remote:cost:loadOptions:logger:)`` or
/// ``Cache/init(directory:codec:memoryCountLimit:memoryCostLimit:diskSizeLimit:remote:logger:)``.
///
/// Four requirements make a tier: read, write, remove one key, remove everything. What a store
/// may or may not offer beyond them is a capability of its own, which ``Cache`` uses when the
/// tier conforms and does without otherwise, so that a tier never fakes one:
/// - ``RemoteCacheInvalidating``: tells each process what the others changed, so that
///   ``Cache`` drops its local copies. Without it, a local copy lives until its time to live
///   ends or it is evicted: give local entries a short time to live.
/// - ``RemoteCacheLocking``: a fleet-wide lock per key, for ``LoadOptions/fleetLockTTL``.
///   Without it, each instance loads a missing key itself.
/// - ``RemoteCacheBatchReading``: many keys in one round trip, for
///   ``Cache/values(forKeys:options:orLoad:)``. Without it, that reads the keys one at a time.
/// - ``RemoteCacheBatchWriting``: many keys in one round trip, for ``Cache/setValues(_:ttl:)``
///   and what bulk loads return. Without it, those send the keys one at a time.
/// - ``RemoteCacheInserting``: store only where nothing is stored, atomically, for
///   ``Cache/insertValue(_:forKey:ttl:)``. Without it, that call throws.
///
/// `RedisCacheTier` has all five.
///
/// Contract for conformers:
/// - A miss is `nil`, never an error. Every failure throws, quickly when the
///   store is down (a circuit breaker), so that ``Cache`` can serve and write its
///   local tiers anyway. ``Cache`` logs a failure once per outage itself.
/// - ``entry(forKey:)`` returns the remaining time to live so that a hit can be
///   promoted to the local tiers without outliving the shared copy.
///
/// One tier serves one ``Cache``.
///
/// Thread-safety: conformers are safe to call from any thread or task.
public protocol RemoteCacheTier<Value>: Sendable {
    /// The type of values stored.
    associatedtype Value

    /// The value for `key` and its remaining time to live, or `nil` on a miss.
    ///
    /// - Parameter key: The caller's key (the tier adds its namespace).
    /// - Returns: The entry, or `nil`.
    /// - Throws: The store's error type when the store fails or is unreachable.
    func entry(forKey key: String) async throws -> RemoteCacheEntry<Value>?

    /// Stores `value` for `key`, expiring after `ttl` (`nil`: never); tells other processes if the
    /// tier is ``RemoteCacheInvalidating``.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: The caller's key.
    ///   - ttl: How long the shared copy lives; `nil` for no expiry.
    /// - Throws: The store's error type when the store fails, is unreachable or refuses the value.
    func setValue(_ value: Value, forKey key: String, ttl: Duration?) async throws

    /// Removes `key`; tells other processes if the tier is ``RemoteCacheInvalidating``.
    ///
    /// - Parameter key: The caller's key.
    /// - Returns: Whether the store held a value for `key`.
    /// - Throws: The store's error type when the store fails or is unreachable.
    @discardableResult
    func removeValue(forKey key: String) async throws -> Bool

    /// Removes every key in the tier's namespace; tells other processes if the tier is
    /// ``RemoteCacheInvalidating``.
    ///
    /// - Throws: The store's error type when the store fails or is unreachable.
    func removeAll() async throws
}
