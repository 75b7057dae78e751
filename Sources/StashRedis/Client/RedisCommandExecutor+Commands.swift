#if Redis
import NIOCore

extension RedisCommandExecutor {
    /// `GET key`: the value, or `nil` when the key does not exist.
    ///
    /// - Parameter key: The key.
    /// - Returns: The value's bytes, or `nil`.
    /// - Throws: ``RedisError`` as ``send(_:)`` does, or `.unexpectedReply`.
    /// - Complexity: One round trip.
    package func get(_ key: String) async throws(RedisError) -> ByteBuffer? {
        let reply = try await send(RedisCommand("GET", key: key, [.string(key)]))
        switch reply {
        case .null: return nil
        case .bulkString(let bytes): return bytes
        default: throw RedisError(.unexpectedReply, "GET answered \(reply)")
        }
    }

    /// `MGET key...`: one optional value per key, in order.
    ///
    /// - Parameter keys: The keys; in a cluster they must share a hash slot (use a hash tag).
    /// - Returns: The values, `nil` for a missing key.
    /// - Throws: ``RedisError`` as ``send(_:)`` does, or `.unexpectedReply`.
    /// - Complexity: One round trip.
    package func mget(_ keys: [String]) async throws(RedisError) -> [ByteBuffer?] {
        guard let first = keys.first else { return [] }
        let reply = try await send(RedisCommand("MGET", key: first, keys.map { .string($0) }))
        guard let elements = reply.elements, elements.count == keys.count else {
            throw RedisError(.unexpectedReply, "MGET answered \(reply)")
        }
        return elements.map { $0.bytes }
    }

    /// `SET key value [PX milliseconds]`.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - value: The bytes to store.
    ///   - ttl: The time to live, rounded up to whole milliseconds; `nil` for none.
    /// - Throws: ``RedisError`` as ``send(_:)`` does.
    /// - Complexity: One round trip.
    package func set(_ key: String, to value: ByteBuffer, ttl: Duration? = nil) async throws(RedisError) {
        _ = try await send(Self.setCommand(key, value, ttl: ttl))
    }

    /// `DEL key...`: the number of keys removed.
    ///
    /// - Parameter keys: The keys; in a cluster they must share a hash slot.
    /// - Returns: How many existed.
    /// - Throws: ``RedisError`` as ``send(_:)`` does.
    /// - Complexity: One round trip.
    @discardableResult
    package func delete(_ keys: [String]) async throws(RedisError) -> Int {
        guard let first = keys.first else { return 0 }
        return Int(try await send(RedisCommand("DEL", key: first, keys.map { .string($0) })).integer ?? 0)
    }

    /// `UNLINK key...`: like ``delete(_:)`` but the server frees the memory in the background.
    ///
    /// - Parameter keys: The keys; in a cluster they must share a hash slot.
    /// - Returns: How many existed.
    /// - Throws: ``RedisError`` as ``send(_:)`` does.
    /// - Complexity: One round trip.
    @discardableResult
    package func unlink(_ keys: [String]) async throws(RedisError) -> Int {
        guard let first = keys.first else { return 0 }
        return Int(try await send(RedisCommand("UNLINK", key: first, keys.map { .string($0) })).integer ?? 0)
    }

    /// `PEXPIRE key milliseconds`: whether the key existed.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - ttl: The new time to live, rounded up to whole milliseconds.
    /// - Returns: `true` when the key existed and now expires.
    /// - Throws: ``RedisError`` as ``send(_:)`` does.
    /// - Complexity: One round trip.
    @discardableResult
    package func expire(_ key: String, ttl: Duration) async throws(RedisError) -> Bool {
        let reply = try await send(RedisCommand("PEXPIRE", key: key, [.string(key), .integer(Self.milliseconds(ttl))]))
        return reply.integer == 1
    }

    /// `PTTL key`: the remaining time to live; `nil` for a missing key, `.max`-like `nil` never.
    ///
    /// - Parameter key: The key.
    /// - Returns: `nil` when the key does not exist, `.some(nil)` when it never expires, else the remaining time.
    /// - Throws: ``RedisError`` as ``send(_:)`` does.
    /// - Complexity: One round trip.
    package func remainingTimeToLive(_ key: String) async throws(RedisError) -> Duration?? {
        let reply = try await send(RedisCommand("PTTL", key: key, [.string(key)]))
        switch reply.integer {
        case -2: return nil
        case -1: return .some(nil)
        case let milliseconds?: return .some(.milliseconds(milliseconds))
        case nil: throw RedisError(.unexpectedReply, "PTTL answered \(reply)")
        }
    }

    /// Runs `script` by `EVALSHA`, or by `EVAL` when the server answers `NOSCRIPT`.
    ///
    /// - Parameters:
    ///   - script: The script.
    ///   - keys: `KEYS`; the first routes the call in a cluster, and all must share its slot.
    ///   - arguments: `ARGV`.
    /// - Returns: The script's reply.
    /// - Throws: ``RedisError`` as ``send(_:)`` does.
    /// - Complexity: One round trip, two the first time a server sees the script.
    package func run(_ script: RedisScript, keys: [String], arguments: [RedisCommand.Argument] = []) async throws(RedisError) -> RESPValue {
        let tail: [RedisCommand.Argument] = [.integer(Int64(keys.count))] + keys.map { .string($0) } + arguments
        do {
            return try await send(RedisCommand("EVALSHA", key: keys.first, [.string(script.sha1)] + tail))
        } catch where error.code == .serverError && error.message.hasPrefix("NOSCRIPT") {
            return try await send(RedisCommand("EVAL", key: keys.first, [.string(script.source)] + tail))
        }
    }

    static func setCommand(_ key: String, _ value: ByteBuffer, ttl: Duration?) -> RedisCommand {
        if let ttl {
            return RedisCommand("SET", key: key, [.string(key), .bytes(value), "PX", .integer(milliseconds(ttl))])
        }
        return RedisCommand("SET", key: key, [.string(key), .bytes(value)])
    }

    /// `ttl` in whole milliseconds, rounded up, at least 1.
    static func milliseconds(_ ttl: Duration) -> Int64 {
        let (seconds, attoseconds) = ttl.components
        let (wholeMilliseconds, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return seconds < 0 ? 1 : Int64.max / 2 }
        let extra = (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return max(1, wholeMilliseconds + extra)
    }
}

extension RedisClient {
    /// `SCAN` over the whole keyspace of this server: every key matching `pattern`.
    ///
    /// - Parameters:
    ///   - pattern: A glob pattern, such as `app:*`.
    ///   - count: The `COUNT` hint per call. Default 1000.
    ///   - body: Called with each batch of keys found; may run commands.
    /// - Throws: ``RedisError`` as ``send(_:)`` does, or what `body` throws.
    /// - Complexity: O(n) in the keyspace's size, in round trips of about `count` keys.
    package func scan(matching pattern: String, count: Int = 1000, _ body: ([String]) async throws(RedisError) -> Void) async throws(RedisError) {
        var cursor = "0"
        repeat {
            let reply = try await send(RedisCommand("SCAN", [.string(cursor), "MATCH", .string(pattern), "COUNT", .integer(Int64(count))]))
            guard let parts = reply.elements, parts.count == 2, let next = parts[0].string, let keys = parts[1].elements else {
                throw RedisError(.unexpectedReply, "SCAN answered \(reply)")
            }
            let names = keys.compactMap { $0.string }
            if !names.isEmpty { try await body(names) }
            cursor = next
        } while cursor != "0"
    }
}
#endif  // Redis
