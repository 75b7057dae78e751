import NIOCore
import Stash

extension RedisCacheTier {
    /// The entries for several keys, in one write (pipelined `GET`s).
    ///
    /// - Parameter keys: The caller's keys.
    /// - Returns: One entry per key, `nil` for a miss, in order.
    /// - Throws: ``RedisError`` as ``entry(forKey:)`` does; the first failure wins.
    /// - Complexity: One round trip per node the keys live on.
    public func entries(forKeys keys: [String]) async throws(RedisError) -> [RemoteCacheEntry<Value>?] {
        let commands = keys.map { key in
            let redisKey = self.redisKey(key)
            return RedisCommand("GET", key: redisKey, [.string(redisKey)])
        }
        let replies = try await call { executor throws(RedisError) in
            try await executor.send(pipeline: commands).map { result throws(RedisError) in try result.get() }
        }
        var entries: [RemoteCacheEntry<Value>?] = []
        entries.reserveCapacity(keys.count)
        for (key, reply) in zip(keys, replies) {
            switch reply {
            case .null: entries.append(nil)
            case .bulkString(let stored): entries.append(try decode(stored, key: key))
            default: throw RedisError(.unexpectedReply, "GET answered \(reply)")
            }
        }
        return entries
    }

    /// Stores several values with one expiry, in one write (pipelined `SET`s and their invalidations).
    ///
    /// - Parameters:
    ///   - values: Keys and values.
    ///   - timeToLive: The expiry of each; `nil` for none.
    /// - Throws: ``RedisError`` as ``setValue(_:forKey:timeToLive:)`` does; the first failure wins.
    /// - Complexity: One round trip per node the keys live on.
    public func setValues(_ values: [(key: String, value: Value)], timeToLive: Duration?) async throws(RedisError) {
        var commands: [RedisCommand] = []
        commands.reserveCapacity(values.count * 2)
        for (key, value) in values {
            commands.append(RedisClient.setCommand(redisKey(key), try encode(value, key: key, timeToLive: timeToLive), ttl: timeToLive))
            if configuration.publishesInvalidations { commands.append(invalidationCommand(.key(key))) }
        }
        try await call { executor throws(RedisError) in
            for result in await executor.send(pipeline: commands) { _ = try result.get() }
        }
    }
}
