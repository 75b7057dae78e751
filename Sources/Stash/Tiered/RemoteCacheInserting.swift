/// A ``RemoteCacheTier`` that can store a value only where it holds none, in one atomic step:
/// what makes ``Cache/insertValue(_:forKey:ttl:)`` atomic across a fleet.
///
/// A capability of its own, so that a tier whose store has no such operation need not fake one.
/// `RedisCacheTier` conforms (`SET ... NX`).
///
/// Thread-safety: conformers are safe to call from any thread or task.
public protocol RemoteCacheInserting<Value>: RemoteCacheTier {
    /// Stores `value` for `key`, expiring after `ttl`, only when the store holds no live value for
    /// `key`; tells other processes when it stores. The check and the write are one atomic step
    /// in the store.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: The caller's key.
    ///   - ttl: How long the shared copy lives; `nil` for no expiry.
    /// - Returns: `true` when the value was stored, `false` when the store already held one.
    /// - Throws: The store's error type when the store fails, is unreachable or refuses the value.
    func insertValue(_ value: Value, forKey key: String, ttl: Duration?) async throws -> Bool
}
