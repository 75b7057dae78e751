#if Redis
import Foundation
import Logging
import NIOCore
import Stash

/// A cache tier on Redis shared by every process of a fleet: namespaced keys,
/// values through a `DiskCodec`, Redis's own expiry, invalidations published to
/// the other processes, a distributed lock for loads, and a circuit breaker.
///
/// Usually the third tier of a `Cache`, which reads it after its memory and
/// disk tiers, writes it after them, and subscribes to its invalidations:
///
/// ```swift
/// let redis = RedisClient(configuration: RedisConfiguration(host: "10.0.0.5"))
/// let cache = try Cache<String>(directory: path, codec: .string,
///                               remote: RedisCacheTier(client: redis, codec: .string))
/// ```
///
/// It can also be used on its own:
///
/// ```swift
/// let tier = RedisCacheTier(client: redis, codec: .string)
/// try await tier.setValue("hello", forKey: "greeting", ttl: .seconds(60))
/// let entry = try await tier.entry(forKey: "greeting")   // "hello", ~60 s left
/// ```
///
/// **Format.** A value is stored as a 10-byte header (a format byte, a version
/// byte, and the absolute expiry in Unix milliseconds, 0 for none) followed by
/// the codec's bytes, so one `GET` returns the value and its remaining time to
/// live. The key also carries Redis's `PX` expiry, so Redis drops it on time.
/// The remaining time is computed against the wall clock: clocks across the
/// fleet must agree (NTP) to within the precision that matters for promotion.
///
/// **Faults.** Each call either reaches Redis or throws. After
/// ``Configuration/failureThreshold`` consecutive failures to reach it, calls
/// throw `.unavailable` at once until one probe is let through: after 125 ms, then
/// after twice as long each time a probe fails, up to ``Configuration/openDuration``
/// (1 s), and at once when the invalidation subscription comes back. The breaker's
/// opening and closing, and the subscription's loss and return, are logged at debug level
/// only: a `Cache` over the tier logs the outage once when it starts and once when it ends,
/// and a handler given to ``startReceivingInvalidations(_:)`` hears
/// `RemoteInvalidation.subscriptionLost`.
///
/// **Speed.** The tier is a thin facade over a non-generic engine that does the
/// keys, the format and the commands; only the codec runs generic code. The
/// reads and writes are inlinable, so they are specialised for the caller's
/// `Value`.
///
/// Thread-safety: safe to use from any thread or task. No call blocks a thread.
public final class RedisCacheTier<Value>: RemoteCacheInvalidating, RemoteCacheLocking, RemoteCacheBatchReading,
    RemoteCacheBatchWriting, RemoteCacheInserting, Sendable {
    /// The tier's settings.
    public let configuration: Configuration
    /// Everything but the codec: keys, format, commands, invalidations, locks and the breaker.
    @usableFromInline let engine: RedisTierEngine
    /// Turns values into bytes and back.
    @usableFromInline let codec: DiskCodec<Value>

    /// This tier instance's identity in invalidation messages: its own messages are ignored.
    public var instanceID: String { engine.instanceID }

    /// This instance's reads, in the form every Stash cache reports (so `StashMetrics`'
    /// `CacheMetrics` exports them): `CacheStatistics.hits` counts keys read with a live
    /// value, `CacheStatistics.misses` keys read without one, by ``entry(forKey:)`` and
    /// ``entries(forKeys:)`` (each key of a batch counts). A read that fails (an open breaker,
    /// a timeout) is neither. Evictions stay 0: Redis evicts on its own, unseen by the tier.
    ///
    /// - Complexity: O(1). Thread-safe; never waits for Redis.
    public var statistics: CacheStatistics {
        let (hits, misses) = engine.lookups.withLock { $0 }
        return CacheStatistics(hits: hits, misses: misses)
    }

    /// Creates a tier on one Redis server. No I/O happens until the first call.
    ///
    /// - Parameters:
    ///   - client: The server's client. The tier does not close it.
    ///   - codec: Turns values into bytes and back; use the same codec as the cache's disk tier.
    ///   - configuration: Namespace, channel, limits and breaker. Default ``Configuration/init(keyPrefix:)``.
    ///   - subscribeOn: The servers ``startReceivingInvalidations(_:)`` may subscribe on.
    ///     Default `nil`: the client's ``RedisClient/configuration``.
    ///   - clock: The monotonic clock of the circuit breaker. Default `SystemClock()`; tests inject a `ManualClock`.
    ///   - wallClock: Unix time, for the stored expiry. Default `WallClock()`.
    ///   - logger: Where outages are logged (once each). Default labelled `Stash.RedisCacheTier`.
    /// - Complexity: O(1).
    public convenience init(client: RedisClient,
                            codec: DiskCodec<Value>,
                            configuration: Configuration = Configuration(),
                            subscribeOn: [RedisConfiguration]? = nil,
                            clock: any CacheClock = SystemClock(),
                            wallClock: any CacheClock = WallClock(),
                            logger: Logger = Logger(label: "Stash.RedisCacheTier")) {
        self.init(executor: client, codec: codec, configuration: configuration, subscribeOn: subscribeOn,
                  clock: clock, wallClock: wallClock, logger: logger)
    }

    /// Creates a tier on a Redis Cluster. No I/O happens until the first call.
    ///
    /// - Parameters:
    ///   - cluster: The cluster's client. The tier does not close it.
    ///   - codec: Turns values into bytes and back; use the same codec as the cache's disk tier.
    ///   - configuration: Namespace, channel, limits and breaker. Default ``Configuration/init(keyPrefix:)``.
    ///   - subscribeOn: The servers ``startReceivingInvalidations(_:)`` may subscribe on.
    ///     Default `nil`: the cluster's primaries when the subscription starts.
    ///   - clock: The monotonic clock of the circuit breaker. Default `SystemClock()`; tests inject a `ManualClock`.
    ///   - wallClock: Unix time, for the stored expiry. Default `WallClock()`.
    ///   - logger: Where outages are logged (once each). Default labelled `Stash.RedisCacheTier`.
    /// - Complexity: O(1).
    public convenience init(cluster: RedisClusterClient,
                            codec: DiskCodec<Value>,
                            configuration: Configuration = Configuration(),
                            subscribeOn: [RedisConfiguration]? = nil,
                            clock: any CacheClock = SystemClock(),
                            wallClock: any CacheClock = WallClock(),
                            logger: Logger = Logger(label: "Stash.RedisCacheTier")) {
        self.init(executor: cluster, codec: codec, configuration: configuration, subscribeOn: subscribeOn,
                  clock: clock, wallClock: wallClock, logger: logger)
    }

    /// Creates a tier on any command executor (``init(client:codec:configuration:subscribeOn:clock:wallClock:logger:)``
    /// and ``init(cluster:codec:configuration:subscribeOn:clock:wallClock:logger:)`` for users;
    /// the package's tests pass their own executors).
    ///
    /// - Parameters:
    ///   - executor: A ``RedisClient`` or a ``RedisClusterClient``.
    ///   - codec: Turns values into bytes and back; use the same codec as the cache's disk tier.
    ///   - configuration: Namespace, channel, limits and breaker. Default ``Configuration/init(keyPrefix:)``.
    ///   - subscribeOn: The servers ``startReceivingInvalidations(_:)`` may subscribe on.
    ///     Default `nil`: the executor's ``RedisClient/configuration`` when it is a
    ///     ``RedisClient``, else the cluster's primaries at that time.
    ///   - clock: The monotonic clock of the circuit breaker. Default `SystemClock()`; tests inject a `ManualClock`.
    ///   - wallClock: Unix time, for the stored expiry. Default `WallClock()`.
    ///   - logger: Where outages are logged (once each). Default labelled `Stash.RedisCacheTier`.
    /// - Complexity: O(1).
    package init(executor: any RedisCommandExecutor,
                codec: DiskCodec<Value>,
                configuration: Configuration = Configuration(),
                subscribeOn: [RedisConfiguration]? = nil,
                clock: any CacheClock = SystemClock(),
                wallClock: any CacheClock = WallClock(),
                logger: Logger = Logger(label: "Stash.RedisCacheTier")) {
        self.configuration = configuration
        self.codec = codec
        self.engine = RedisTierEngine(
            executor: executor, keyPrefix: configuration.keyPrefix, channel: configuration.channel,
            publishesInvalidations: configuration.publishesInvalidations,
            maximumValueSize: configuration.maximumValueSize, failureThreshold: configuration.failureThreshold,
            openDuration: configuration.openDuration, subscribeOn: subscribeOn, clock: clock,
            wallClock: wallClock, logger: logger, emptiesAfterRestart: configuration.emptiesAfterRestart)
    }

    /// The value for `key` and its remaining time to live, or `nil` on a miss.
    ///
    /// - Parameter key: The caller's key (the prefix is added).
    /// - Returns: The entry, or `nil` when Redis has no live value.
    /// - Throws: ``RedisError``: `.unavailable` while the breaker is open, a
    ///   connection or timeout error, or `.decodingFailed` when the stored bytes
    ///   are not a value of this format and codec.
    /// - Complexity: One `GET` round trip.
    @inlinable
    public func entry(forKey key: String) async throws(RedisError) -> RemoteCacheEntry<Value>? {
        guard let stored = try await engine.storedValue(forKey: key) else { return nil }
        return try entry(from: stored, key: key)
    }

    /// Stores `value` under `key` with Redis expiry `ttl`, then publishes an invalidation.
    ///
    /// The `SET` and the `PUBLISH` go in one write (one round trip).
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: The caller's key.
    ///   - ttl: The expiry, rounded up to whole milliseconds; `nil` for none.
    /// - Throws: ``RedisError``: `.encodingFailed`, `.invalidArgument` for a time to live
    ///   that is not positive, `.valueTooLarge` (over ``Configuration/maximumValueSize``
    ///   or the server's `proto-max-bulk-len`), `.unavailable`, or a connection or timeout error.
    /// - Complexity: One round trip.
    @inlinable
    public func setValue(_ value: Value, forKey key: String, ttl: Duration?) async throws(RedisError) {
        try await engine.store(try encoded(value, key: key), forKey: key, ttl: ttl)
    }

    /// Stores `value` under `key` only when Redis holds no live value for it (`SET ... NX`, one
    /// atomic step in Redis), and publishes an invalidation: what makes
    /// `Cache.insertValue(_:forKey:ttl:)` atomic across a fleet.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: The caller's key.
    ///   - ttl: The expiry, rounded up to whole milliseconds; `nil` for none.
    /// - Returns: `true` when Redis stored it, `false` when it held a value.
    /// - Throws: ``RedisError``, as ``setValue(_:forKey:ttl:)``.
    /// - Complexity: One round trip.
    @inlinable
    public func insertValue(_ value: Value, forKey key: String, ttl: Duration?) async throws(RedisError) -> Bool {
        try await engine.storeIfAbsent(try encoded(value, key: key), forKey: key, ttl: ttl)
    }

    /// Removes `key` (`UNLINK`), then publishes an invalidation.
    ///
    /// - Parameter key: The caller's key.
    /// - Returns: Whether Redis held the key.
    /// - Throws: ``RedisError``: `.unavailable`, or a connection or timeout error.
    /// - Complexity: One round trip.
    @discardableResult
    public func removeValue(forKey key: String) async throws(RedisError) -> Bool {
        try await engine.removeValue(forKey: key)
    }

    /// Removes every key under the prefix (`SCAN` and `UNLINK` on every primary),
    /// then publishes an invalidation of everything.
    ///
    /// Keys written concurrently may survive. The lock and fencing keys of
    /// ``acquireLock(forKey:ttl:)`` (`{<prefix><key>}:lock` and `:fence`) do not match the prefix
    /// and stay: each expires on its own (the lock after its time to live, the counter a day,
    /// or 100 lock lifetimes, after the key's last lock attempt; it then starts again from the
    /// server's clock in microseconds, so tokens keep growing).
    ///
    /// - Throws: ``RedisError``: `.unavailable`, or a connection or timeout error.
    /// - Complexity: O(n) in the whole keyspace (SCAN visits every key), in round trips of 1000 keys.
    public func removeAll() async throws(RedisError) {
        try await engine.removeAll()
    }

    /// Subscribes to the invalidation channel on a dedicated connection and calls
    /// `handler` for every other instance's write or removal.
    ///
    /// When the subscription drops, `handler` gets `RemoteInvalidation.subscriptionLost`, and
    /// once it is restored, `RemoteInvalidation.all`: messages sent meanwhile were lost. Before
    /// that `.all`, if a primary restarted (its `run_id` changed), the namespace is emptied (see
    /// ``Configuration/emptiesAfterRestart``). Between the two, `handler` gets nothing: other
    /// instances' messages that reach the restored subscription before its `.all` are dropped,
    /// as the `.all` covers them. Call once per tier; ``close()`` stops it.
    ///
    /// - Parameter handler: Called for other instances' messages on an event loop thread, and for
    ///   `.subscriptionLost` and the return's `.all` on the subscriber's task. Keep it short and
    ///   non-blocking.
    /// - Throws: ``RedisError`` when no server accepts the subscription.
    public func startReceivingInvalidations(_ handler: @escaping @Sendable (RemoteInvalidation) -> Void) async throws(RedisError) {
        try await engine.startReceivingInvalidations(handler)
    }

    /// Stops the invalidation subscription; the same as ``close()``.
    public func stopReceivingInvalidations() async {
        await close()
    }

    /// Stops the invalidation subscription. The executor is the caller's to close.
    public func close() async {
        await engine.close()
    }

    /// Tries once to take the fleet-wide lock on `key`, for loading it.
    ///
    /// Use it so that one instance of the fleet loads a missing key while the
    /// others wait for its value or serve a stale one. Never waits for the lock.
    ///
    /// - Parameters:
    ///   - key: The caller's key (not containing `{` or `}`, which would change the hash tag).
    ///   - ttl: How long the lock holds if never released; longer than the load takes.
    /// - Returns: The lock with its fencing token, or `nil` when another holder has it.
    /// - Throws: ``RedisError``: `.unavailable`, or a connection or timeout error.
    /// - Complexity: One round trip.
    public func acquireLock(forKey key: String, ttl: Duration) async throws(RedisError) -> RedisLock? {
        try await engine.acquireLock(forKey: key, ttl: ttl)
    }

    /// Releases `lock` if this holder still has it (compare and delete, in one script).
    ///
    /// - Parameter lock: A lock from ``acquireLock(forKey:ttl:)``.
    /// - Throws: ``RedisError`` `.lockNotHeld` when the lock expired (and maybe
    ///   was taken by another holder); `.unavailable`, or a connection or timeout error.
    /// - Complexity: One round trip.
    public func releaseLock(_ lock: RedisLock) async throws(RedisError) {
        try await engine.releaseLock(lock)
    }

    // MARK: - The codec, the only generic part

    /// The codec's bytes for `value`.
    @inlinable
    func encoded(_ value: Value, key: String) throws(RedisError) -> Data {
        do {
            return try codec.encode(value)
        } catch {
            throw RedisError(.encodingFailed, "the codec could not encode the value for \(key)", cause: error)
        }
    }

    /// The entry for a stored value whose header the engine has read.
    @inlinable
    func entry(from stored: RedisTierEngine.StoredValue, key: String) throws(RedisError) -> RemoteCacheEntry<Value> {
        let value: Value
        do {
            value = try codec.decode(stored.bytes)
        } catch {
            throw RedisError(.decodingFailed, "the codec could not decode the value of \(key)", cause: error)
        }
        return RemoteCacheEntry(value: value, ttl: stored.ttl)
    }
}
#endif  // Redis
