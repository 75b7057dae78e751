/// A cache tier shared by several processes: what ``Cache`` calls to read,
/// write and remove in a remote store, and to learn what other processes changed.
///
/// This is the seam between ``Cache`` (memory → disk → remote) and a remote
/// store, so that the core builds no networking code. `RedisCacheTier`, in the
/// `StashRedis` product, is the Redis implementation. Hand one to a cache with
/// ``Cache/init(memory:disk:remote:cost:loadOptions:logger:)`` or
/// ``Cache/init(directory:codec:memoryCountLimit:memoryCostLimit:diskSizeLimit:remote:logger:)``.
///
/// Contract for conformers:
/// - A miss is `nil`, never an error. Every failure throws, quickly when the
///   store is down (a circuit breaker), so that ``Cache`` can serve and write its
///   local tiers anyway. ``Cache`` logs a failure once per outage itself.
/// - ``entry(forKey:)`` returns the remaining time to live so that a hit can be
///   promoted to the local tiers without outliving the shared copy.
/// - Every successful write or removal tells every *other* subscribed process,
///   whose handler then gets the key (never one's own changes). A change is
///   told after it is applied, so that a process which drops its local copy on
///   hearing of it and then reads the store gets the new value.
/// - When the subscription drops, the handler gets
///   ``RemoteInvalidation/subscriptionLost``; once it is restored,
///   ``RemoteInvalidation/all``: changes told meanwhile were lost. (A tier that
///   cannot tell when its subscription drops sends only the ``RemoteInvalidation/all``;
///   the cache then repairs stale keys as soon as a call succeeds, and an
///   ``RemoteInvalidation/all`` that arrives after that repair drops those keys' local copies.)
///
/// One tier serves one ``Cache``: the cache starts and stops its subscription.
///
/// Thread-safety: conformers are safe to call from any thread or task.
public protocol RemoteCacheTier<Value>: Sendable {
    /// The type of values stored.
    associatedtype Value
    /// A held fleet-wide lock, as ``acquireLock(forKey:ttl:)`` returns it.
    associatedtype FleetLock: Sendable

    /// The value for `key` and its remaining time to live, or `nil` on a miss.
    ///
    /// - Parameter key: The caller's key (the tier adds its namespace).
    /// - Returns: The entry, or `nil`.
    /// - Throws: The store's error type when the store fails or is unreachable.
    func entry(forKey key: String) async throws -> RemoteCacheEntry<Value>?

    /// Stores `value` for `key`, expiring after `ttl` (`nil`: never), and tells other processes.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: The caller's key.
    ///   - ttl: How long the shared copy lives; `nil` for no expiry.
    /// - Throws: The store's error type when the store fails, is unreachable or refuses the value.
    func setValue(_ value: Value, forKey key: String, ttl: Duration?) async throws

    /// Removes `key` and tells other processes.
    ///
    /// - Parameter key: The caller's key.
    /// - Returns: Whether the store held a value for `key`.
    /// - Throws: The store's error type when the store fails or is unreachable.
    @discardableResult
    func removeValue(forKey key: String) async throws -> Bool

    /// Removes every key in the tier's namespace and tells other processes.
    ///
    /// - Throws: The store's error type when the store fails or is unreachable.
    func removeAll() async throws

    /// Starts delivering other processes' changes to `handler`, replacing any
    /// earlier handler, and keeps delivering them across lost connections.
    ///
    /// - Parameter handler: Called with each invalidation, on an arbitrary thread;
    ///   it must return quickly and never block.
    /// - Throws: The store's error type when the subscription cannot be made now.
    func startReceivingInvalidations(_ handler: @escaping @Sendable (RemoteInvalidation) -> Void) async throws

    /// Stops delivering invalidations. Does nothing when none are delivered.
    func stopReceivingInvalidations() async

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
