#if Redis
import Foundation
import Stash

extension RedisCacheTier {
    /// The entries for several keys, in one round trip: one `MGET` on a single server; in a
    /// cluster, one `MGET` per hash slot, pipelined, one write per node.
    ///
    /// - Parameter keys: The caller's keys.
    /// - Returns: One entry per key, `nil` for a miss, in order. A value the tier cannot decode
    ///   (a foreign header, a codec failure) is a miss for its key, so that one damaged value does
    ///   not fail the others (``entry(forKey:)`` throws `.decodingFailed` for it).
    /// - Throws: ``RedisError`` when Redis fails or is unreachable; the first failure wins.
    /// - Complexity: One round trip per node the keys live on.
    @inlinable
    public func entries(forKeys keys: [String]) async throws(RedisError) -> [RemoteCacheEntry<Value>?] {
        let storedValues = try await engine.storedValues(forKeys: keys)
        var entries: [RemoteCacheEntry<Value>?] = []
        entries.reserveCapacity(storedValues.count)
        for (key, stored) in zip(keys, storedValues) {
            if let stored, let entry = try? entry(from: stored, key: key) { entries.append(entry) } else { entries.append(nil) }
        }
        return entries
    }

    /// Stores several values with one expiry, in one write (pipelined `SET`s and their invalidations).
    ///
    /// - Parameters:
    ///   - values: Keys and values.
    ///   - ttl: The expiry of each; `nil` for none.
    /// - Throws: ``RedisError`` as ``setValue(_:forKey:ttl:)`` does; the first failure wins.
    /// - Complexity: One round trip per node the keys live on.
    @inlinable
    public func setValues(_ values: [(key: String, value: Value)], ttl: Duration?) async throws(RedisError) {
        var encoded: [(key: String, bytes: Data)] = []
        encoded.reserveCapacity(values.count)
        for (key, value) in values { encoded.append((key, try self.encoded(value, key: key))) }
        try await engine.store(encoded, ttl: ttl)
    }
}
#endif  // Redis
