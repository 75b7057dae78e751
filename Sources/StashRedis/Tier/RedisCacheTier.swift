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
///                               remote: RedisCacheTier(executor: redis, codec: .string))
/// ```
///
/// It can also be used on its own:
///
/// ```swift
/// let tier = RedisCacheTier(executor: redis, codec: .string)
/// try await tier.setValue("hello", forKey: "greeting", timeToLive: .seconds(60))
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
/// throw `.unavailable` at once for ``Configuration/openDuration``, then one probe
/// is let through. The outage is logged once when it starts and once when it ends.
///
/// Thread-safety: safe to use from any thread or task. No call blocks a thread.
public final class RedisCacheTier<Value>: RemoteCacheTier, Sendable {
    /// The tier's settings.
    public let configuration: Configuration
    /// This tier instance's identity in invalidation messages: its own messages are ignored.
    public let instanceID: String
    let executor: any RedisCommandExecutor
    let codec: DiskCodec<Value>
    let breaker: RedisCircuitBreaker
    let wallClock: any CacheClock
    let logger: Logger
    let subscriber = LockedValue<RedisSubscriber?>(nil)
    let subscriberCandidates: [RedisConfiguration]?

    /// Creates a tier. No I/O happens until the first call.
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
    ///   - logger: Where outages are logged (once each). Default labelled `stash.redis.tier`.
    /// - Complexity: O(1).
    public init(executor: any RedisCommandExecutor,
                codec: DiskCodec<Value>,
                configuration: Configuration = Configuration(),
                subscribeOn: [RedisConfiguration]? = nil,
                clock: any CacheClock = SystemClock(),
                wallClock: any CacheClock = WallClock(),
                logger: Logger = Logger(label: "stash.redis.tier")) {
        self.executor = executor
        self.codec = codec
        self.configuration = configuration
        self.instanceID = UUID().uuidString
        self.breaker = RedisCircuitBreaker(failureThreshold: configuration.failureThreshold,
                                           openDuration: configuration.openDuration, clock: clock, logger: logger)
        self.wallClock = wallClock
        self.logger = logger
        self.subscriberCandidates = subscribeOn
    }

    /// The Redis key of `key`.
    func redisKey(_ key: String) -> String { configuration.keyPrefix + key }

    /// The value for `key` and its remaining time to live, or `nil` on a miss.
    ///
    /// - Parameter key: The caller's key (the prefix is added).
    /// - Returns: The entry, or `nil` when Redis has no live value.
    /// - Throws: ``RedisError``: `.unavailable` while the breaker is open, a
    ///   connection or timeout error, or `.decodingFailed` when the stored bytes
    ///   are not a value of this format and codec.
    /// - Complexity: One `GET` round trip.
    public func entry(forKey key: String) async throws(RedisError) -> RemoteCacheEntry<Value>? {
        let redisKey = self.redisKey(key)
        guard let stored = try await call({ executor throws(RedisError) in try await executor.get(redisKey) }) else { return nil }
        return try decode(stored, key: key)
    }

    /// Stores `value` under `key` with Redis expiry `timeToLive`, then publishes an invalidation.
    ///
    /// The `SET` and the `PUBLISH` go in one write (one round trip).
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: The caller's key.
    ///   - timeToLive: The expiry, rounded up to whole milliseconds; `nil` for none.
    /// - Throws: ``RedisError``: `.encodingFailed`, `.valueTooLarge` (over
    ///   ``Configuration/maximumValueSize`` or the server's `proto-max-bulk-len`),
    ///   `.unavailable`, or a connection or timeout error.
    /// - Complexity: One round trip.
    public func setValue(_ value: Value, forKey key: String, timeToLive: Duration?) async throws(RedisError) {
        let payload = try encode(value, key: key, timeToLive: timeToLive)
        let redisKey = self.redisKey(key)
        var commands = [RedisClient.setCommand(redisKey, payload, ttl: timeToLive)]
        if configuration.publishesInvalidations { commands.append(invalidationCommand(.key(key))) }
        try await callPipeline(commands)
    }

    /// Removes `key` (`UNLINK`), then publishes an invalidation.
    ///
    /// - Parameter key: The caller's key.
    /// - Returns: Whether Redis held the key.
    /// - Throws: ``RedisError``: `.unavailable`, or a connection or timeout error.
    /// - Complexity: One round trip.
    @discardableResult
    public func removeValue(forKey key: String) async throws(RedisError) -> Bool {
        let redisKey = self.redisKey(key)
        var commands = [RedisCommand("UNLINK", key: redisKey, [.string(redisKey)])]
        if configuration.publishesInvalidations { commands.append(invalidationCommand(.key(key))) }
        return try await callPipeline(commands).integer == 1
    }

    /// Removes every key under the prefix (`SCAN` and `UNLINK` on every primary),
    /// then publishes an invalidation of everything.
    ///
    /// Keys written concurrently may survive. The lock and fencing keys of
    /// ``acquireLock(forKey:timeToLive:)`` are under the prefix too and go as well.
    ///
    /// - Throws: ``RedisError``: `.unavailable`, or a connection or timeout error.
    /// - Complexity: O(n) in the whole keyspace (SCAN visits every key), in round trips of 1000 keys.
    public func removeAll() async throws(RedisError) {
        let pattern = Self.globEscaped(configuration.keyPrefix) + "*"
        try await call { executor throws(RedisError) in
            for client in try await executor.primaryClients() {
                try await client.scan(matching: pattern) { keys throws(RedisError) in
                    // One UNLINK per key: in a cluster, keys of one batch may live in different slots.
                    for result in await client.send(pipeline: keys.map { RedisCommand("UNLINK", key: $0, [.string($0)]) }) {
                        _ = try result.get()
                    }
                }
            }
        }
        if configuration.publishesInvalidations {
            let command = invalidationCommand(.all)
            _ = try await call { executor throws(RedisError) in try await executor.send(command) }
        }
    }

    /// Stops the invalidation subscription; the same as ``close()``.
    public func stopReceivingInvalidations() async {
        await close()
    }

    /// Stops the invalidation subscription. The executor is the caller's to close.
    public func close() async {
        let current = subscriber.withLock { subscriber in
            defer { subscriber = nil }
            return subscriber
        }
        await current?.stop()
    }

    // MARK: - Calls through the breaker

    /// Runs `body` if the breaker allows it, recording whether Redis was reached.
    func call<Outcome>(_ body: (any RedisCommandExecutor) async throws(RedisError) -> Outcome) async throws(RedisError) -> Outcome {
        guard breaker.allowsCall() else {
            throw RedisError(.unavailable, "Redis is unreachable; the circuit breaker is open")
        }
        do {
            let result = try await body(executor)
            breaker.recordSuccess()
            return result
        } catch {
            let mapped = Self.mapped(error)
            if RedisCircuitBreaker.isOutage(mapped) { breaker.recordFailure(mapped) } else { breaker.recordSuccess() }
            throw mapped
        }
    }

    /// Sends `commands` in one write; returns the first command's reply.
    @discardableResult
    private func callPipeline(_ commands: [RedisCommand]) async throws(RedisError) -> RESPValue {
        try await call { executor throws(RedisError) in
            if commands.count == 1 {
                return try await executor.send(commands[0])
            }
            let results = await executor.send(pipeline: commands)
            for result in results { _ = try result.get() }
            return try results[0].get()
        }
    }

    /// Redis answers a bulk string over `proto-max-bulk-len` with this error, then closes the connection.
    static func mapped(_ error: RedisError) -> RedisError {
        if error.code == .serverError, error.message.contains("invalid bulk length") {
            return RedisError(.valueTooLarge, "the value is larger than the server's proto-max-bulk-len", cause: error)
        }
        return error
    }

    static func globEscaped(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if "*?[]\\".contains(character) { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }
}

