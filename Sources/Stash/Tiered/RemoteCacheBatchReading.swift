/// A ``RemoteCacheTier`` that reads many keys in one round trip: what
/// ``Cache/values(forKeys:options:orLoad:)`` uses for the keys its local tiers miss.
///
/// A capability of its own, so that a store without a multi-key read need not fake one (a
/// ``Cache`` over such a tier reads those keys one at a time). `RedisCacheTier` conforms
/// (`MGET`; in a cluster, one `MGET` per hash slot, pipelined).
///
/// Thread-safety: conformers are safe to call from any thread or task.
public protocol RemoteCacheBatchReading<Value>: RemoteCacheTier {
    /// The entries for `keys`, each with its remaining time to live, as
    /// ``RemoteCacheTier/entry(forKey:)`` would return them one by one.
    ///
    /// - Parameter keys: The caller's keys, without duplicates.
    /// - Returns: One entry per key, in the order of `keys`; `nil` for a miss.
    /// - Throws: The store's error type when the store fails or is unreachable; a batch either
    ///   answers every key or throws.
    func entries(forKeys keys: [String]) async throws -> [RemoteCacheEntry<Value>?]
}
