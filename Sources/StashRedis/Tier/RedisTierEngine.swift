#if Redis
import Foundation
import Logging
import NIOCore
import Stash

/// The work of a ``RedisCacheTier``, on bytes: namespaced keys, the stored
/// format, the commands, invalidations, locks, and the circuit breaker.
///
/// Not generic, so that it is compiled once, specialised, in this module; the
/// generic ``RedisCacheTier`` facade only runs its codec around these calls
/// (and is inlinable, so a caller's `RedisCacheTier<Data>` is specialised too).
/// A pipeline of keys costs one wall-clock read, one payload buffer and one
/// array of commands, whatever the number of keys.
///
/// Thread-safety: immutable but for the subscriber, which is behind a lock.
@usableFromInline
final class RedisTierEngine: Sendable {
    let executor: any RedisCommandExecutor
    /// Whether `executor` is a cluster client, whose `MGET`s must keep to one hash slot.
    let executorIsCluster: Bool
    let keyPrefix: String
    /// The pub/sub channel of invalidations.
    let channel: String
    let publishesInvalidations: Bool
    let maximumValueSize: Int
    /// This instance's identity in invalidation messages.
    let instanceID: String
    let breaker: RedisCircuitBreaker
    let wallClock: any CacheClock
    let logger: Logger
    let subscriber = LockedValue<RedisSubscriber?>(nil)
    let subscriberCandidates: [RedisConfiguration]?
    /// Whether the namespace is emptied when a primary restarts (see `emptyIfRestarted()`).
    let emptiesAfterRestart: Bool
    /// The primaries' `run_id`s as last seen, to tell a restart.
    let knownRunIDs = LockedValue<RunIDs>([:])
    /// Reads that found a live value, and reads that did not (see `RedisCacheTier.statistics`).
    let lookups = LockedValue((hits: 0, misses: 0))

    init(executor: any RedisCommandExecutor, keyPrefix: String, channel: String, publishesInvalidations: Bool,
         maximumValueSize: Int, failureThreshold: Int, openDuration: Duration,
         subscribeOn: [RedisConfiguration]?, clock: any CacheClock, wallClock: any CacheClock, logger: Logger,
         emptiesAfterRestart: Bool = true) {
        self.executor = executor
        self.executorIsCluster = executor is RedisClusterClient
        self.keyPrefix = keyPrefix
        self.channel = channel
        self.publishesInvalidations = publishesInvalidations
        self.maximumValueSize = maximumValueSize
        self.instanceID = UUID().uuidString
        self.breaker = RedisCircuitBreaker(failureThreshold: failureThreshold, openDuration: openDuration,
                                           clock: clock, logger: logger)
        self.wallClock = wallClock
        self.logger = logger
        self.subscriberCandidates = subscribeOn
        self.emptiesAfterRestart = emptiesAfterRestart
    }

    /// The Redis key of `key`.
    func redisKey(_ key: String) -> String { keyPrefix + key }

    // MARK: - Reads and writes

    /// The stored bytes and remaining time to live for `key`, or `nil` on a miss.
    @usableFromInline
    func storedValue(forKey key: String) async throws(RedisError) -> StoredValue? {
        let redisKey = self.redisKey(key)
        guard let stored = try await call({ executor throws(RedisError) in try await executor.get(redisKey) }) else {
            count(hits: 0, misses: 1)
            return nil
        }
        let value = try decodeHeader(stored, key: key, nowMilliseconds: wallMilliseconds())
        count(hits: value == nil ? 0 : 1, misses: value == nil ? 1 : 0)
        return value
    }

    /// Adds to ``lookups``.
    @usableFromInline
    func count(hits: Int, misses: Int) {
        lookups.withLock { $0 = ($0.hits + hits, $0.misses + misses) }
    }

    /// ``storedValue(forKey:)`` for several keys, in one round trip: one `MGET` on a single
    /// server; in a cluster one `MGET` per hash slot (keys sharing a hash tag share one), the
    /// `MGET`s pipelined, one write per node. The first failure wins.
    @usableFromInline
    func storedValues(forKeys keys: [String]) async throws(RedisError) -> [StoredValue?] {
        guard !keys.isEmpty else { return [] }
        let redisKeys = keys.map(redisKey)
        // Indices of `keys` per MGET: a cluster refuses an MGET across slots (CROSSSLOT).
        let groups: [[Int]] = executorIsCluster
            ? Array(Dictionary(grouping: redisKeys.indices) { RedisKeySlot(key: redisKeys[$0]) }.values)
            : [Array(redisKeys.indices)]
        let commands = groups.map { group in
            RedisCommand("MGET", key: redisKeys[group[0]], group.map { .string(redisKeys[$0]) })
        }
        let results = try await call { executor throws(RedisError) in
            let results = await executor.send(pipeline: commands)
            for result in results { if case .failure(let error) = result { throw error } }
            return results
        }
        let now = wallMilliseconds()
        var values = [StoredValue?](repeating: nil, count: keys.count)
        for (group, result) in zip(groups, results) {
            guard case .success(let reply) = result, let elements = reply.elements, elements.count == group.count else {
                throw RedisError(.unexpectedReply, "MGET of \(group.count) keys answered \(result)")
            }
            for (index, element) in zip(group, elements) {
                switch element {
                case .null: continue
                case .bulkString(let stored):
                    // One foreign or damaged value is a miss for its key, not a failure of the batch.
                    do {
                        values[index] = try decodeHeader(stored, key: keys[index], nowMilliseconds: now)
                    } catch {
                        logger.debug("a value in Redis has no Stash header; read as a miss", metadata: ["key": "\(keys[index])"])
                    }
                default: throw RedisError(.unexpectedReply, "MGET answered \(element) for a key")
                }
            }
        }
        let hits = values.reduce(0) { $0 + ($1 == nil ? 0 : 1) }
        count(hits: hits, misses: values.count - hits)
        return values
    }

    /// Stores `encoded` (a codec's bytes) under `key` with Redis expiry `ttl`,
    /// then publishes an invalidation; the `SET` and the `PUBLISH` go in one write.
    @usableFromInline
    func store(_ encoded: Data, forKey key: String, ttl: Duration?) async throws(RedisError) {
        let expiry = try Expiry(ttl, key: key, wallClock: wallClock)
        var payload = ByteBufferAllocator().buffer(capacity: try payloadSize(of: encoded, key: key))
        writePayload(encoded, expiry: expiry, into: &payload)
        var commands = [setCommand(key, payload, expiry: expiry)]
        if publishesInvalidations { commands.append(invalidationCommand(forKey: key)) }
        try await callPipeline(commands)
    }

    /// Stores several codecs' bytes with one expiry, in one write (pipelined
    /// `SET`s and their invalidations); the first failure wins.
    @usableFromInline
    func store(_ encoded: [(key: String, bytes: Data)], ttl: Duration?) async throws(RedisError) {
        guard let first = encoded.first else { return }
        let expiry = try Expiry(ttl, key: first.key, wallClock: wallClock)
        // Every payload in one buffer, each sent as a slice of it: one allocation per pipeline.
        var capacity = 0
        for (key, bytes) in encoded { capacity += try payloadSize(of: bytes, key: key) }
        var payloads = ByteBufferAllocator().buffer(capacity: capacity)
        for (_, bytes) in encoded { writePayload(bytes, expiry: expiry, into: &payloads) }
        var commands: [RedisCommand] = []
        commands.reserveCapacity(publishesInvalidations ? encoded.count * 2 : encoded.count)
        var offset = payloads.readerIndex
        for (key, bytes) in encoded {
            let length = Self.headerSize + bytes.count
            commands.append(setCommand(key, payloads.getSlice(at: offset, length: length)!, expiry: expiry))
            offset += length
            if publishesInvalidations { commands.append(invalidationCommand(forKey: key)) }
        }
        try await call { executor throws(RedisError) in
            for result in await executor.send(pipeline: commands) { if case .failure(let error) = result { throw error } }
        }
    }

    /// Stores `encoded` under `key` only when Redis holds no value for it (`SET ... NX`), and
    /// publishes an invalidation in the same write (other instances drop a local copy they may
    /// hold of a value that expired here; when nothing was stored that costs them one read).
    ///
    /// - Returns: Whether Redis stored it.
    @usableFromInline
    func storeIfAbsent(_ encoded: Data, forKey key: String, ttl: Duration?) async throws(RedisError) -> Bool {
        let expiry = try Expiry(ttl, key: key, wallClock: wallClock)
        var payload = ByteBufferAllocator().buffer(capacity: try payloadSize(of: encoded, key: key))
        writePayload(encoded, expiry: expiry, into: &payload)
        var commands = [setCommand(key, payload, expiry: expiry, onlyIfAbsent: true)]
        if publishesInvalidations { commands.append(invalidationCommand(forKey: key)) }
        switch try await callPipeline(commands) {
        case .null: return false
        case let reply where reply.string == "OK": return true
        case let reply: throw RedisError(.unexpectedReply, "SET NX answered \(reply)")
        }
    }

    /// `SET` of `payload` under `key`'s Redis key, with `PX` when `expiry` has a time to live, and
    /// `NX` when `onlyIfAbsent`.
    private func setCommand(_ key: String, _ payload: ByteBuffer, expiry: Expiry, onlyIfAbsent: Bool = false) -> RedisCommand {
        let redisKey = self.redisKey(key)
        var arguments: [RedisCommand.Argument] = [.string(redisKey), .bytes(payload)]
        if let milliseconds = expiry.ttlMilliseconds { arguments += ["PX", .integer(milliseconds)] }
        if onlyIfAbsent { arguments.append("NX") }
        return RedisCommand("SET", key: redisKey, arguments)
    }

    /// Removes `key` (`UNLINK`), then publishes an invalidation; whether Redis held it.
    @usableFromInline
    func removeValue(forKey key: String) async throws(RedisError) -> Bool {
        let redisKey = self.redisKey(key)
        var commands = [RedisCommand("UNLINK", key: redisKey, [.string(redisKey)])]
        if publishesInvalidations { commands.append(invalidationCommand(forKey: key)) }
        return try await callPipeline(commands).integer == 1
    }

    /// Removes every key under the prefix (`SCAN` and `UNLINK` on every primary),
    /// then publishes an invalidation of everything.
    func removeAll() async throws(RedisError) {
        try await emptyNamespace()
        if publishesInvalidations {
            let command = invalidationCommand(forKey: nil)
            _ = try await call { executor throws(RedisError) in try await executor.send(command) }
        }
    }

    /// Removes every key under the prefix (`SCAN` and `UNLINK` on every primary), telling no one.
    ///
    /// - Parameter kept: A key left in place although it matches (the restart guard, which is in
    ///   the namespace when the prefix is empty or begins `stash-restart:`).
    func emptyNamespace(keeping kept: String? = nil) async throws(RedisError) {
        let pattern = Self.globEscaped(keyPrefix) + "*"
        try await call { executor throws(RedisError) in
            for client in try await executor.primaryClients() {
                try await client.scan(matching: pattern) { keys throws(RedisError) in
                    let doomed = keys.filter { $0 != kept }
                    // One UNLINK per key: in a cluster, keys of one batch may live in different slots.
                    for result in await client.send(pipeline: doomed.map { RedisCommand("UNLINK", key: $0, [.string($0)]) }) {
                        _ = try result.get()
                    }
                }
            }
        }
    }

    /// Stops the invalidation subscription.
    func close() async {
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
#endif  // Redis
