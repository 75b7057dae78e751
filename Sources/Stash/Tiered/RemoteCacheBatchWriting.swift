/// A ``RemoteCacheTier`` that stores many values in one round trip: what
/// ``Cache/setValues(_:ttl:)`` and the bulk loads of ``Cache/values(forKeys:options:orLoad:)`` use
/// to share what they wrote.
///
/// A capability of its own, so that a store without a multi-key write need not fake one (a
/// ``Cache`` over such a tier sends the values one at a time). `RedisCacheTier` conforms
/// (pipelined `SET`s and their invalidations; in a cluster, one write per node).
///
/// Thread-safety: conformers are safe to call from any thread or task.
public protocol RemoteCacheBatchWriting<Value>: RemoteCacheTier {
    /// Stores each value for its key, all expiring after `ttl` (`nil`: never), and tells other
    /// processes if the tier is ``RemoteCacheInvalidating``, as
    /// ``RemoteCacheTier/setValue(_:forKey:ttl:)`` would one by one.
    ///
    /// - Parameters:
    ///   - values: Keys and values, without duplicate keys.
    ///   - ttl: How long each shared copy lives; `nil` for no expiry.
    /// - Throws: The store's error type when the store fails, is unreachable or refuses a value.
    ///   A batch that throws may have stored some of its values: ``Cache`` then treats every key of
    ///   the batch as a failed write.
    func setValues(_ values: [(key: String, value: Value)], ttl: Duration?) async throws
}
