/// Storing a value only where there is none: the create of a key-value store (Hummingbird's
/// `PersistDriver.create`, a lock-free claim, an idempotency key).
extension Cache {
    /// Stores `value` for `key` only when no tier holds a live value for it, as one atomic step:
    /// two callers inserting the same key at once see one `true` and one `false`.
    ///
    /// - Without a remote tier, atomic within the process: the check of memory and disk and the
    ///   write happen under `key`'s lock. (Two processes sharing one disk directory may both
    ///   insert: use a remote tier to decide across processes.)
    /// - With a remote tier, atomic across the fleet: a value held locally answers `false` at once;
    ///   otherwise the remote tier inserts in one step of its own (``RemoteCacheInserting``:
    ///   `SET NX` for `RedisCacheTier`), after every earlier change of `key` from this process has
    ///   reached it, and the value goes into the local tiers only when the remote tier took it.
    ///   Unlike other operations, this one fails when the remote tier does: without it the answer
    ///   could be wrong.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: Any non-empty string.
    ///   - ttl: How long the entry lives, in every tier. Defaults to `nil`: no expiry.
    /// - Returns: `true` when the value was stored, `false` when a tier already held `key`.
    /// - Throws: ``StashError``: the disk tier's errors (an empty key, an encoding failure, a
    ///   disk failure), or ``StashError/Code/remoteFailed`` when the remote tier fails or does not
    ///   conform to ``RemoteCacheInserting``; nothing is stored then.
    /// - Complexity: O(1) for memory, plus a disk lookup and transaction, plus one remote round trip
    ///   with a remote tier. Disk work runs on the disk tier's queue. Thread-safe.
    public func insertValue(_ value: Value, forKey key: String, ttl: Duration? = nil) async throws(StashError) -> Bool {
        try await core.insertValue(value, forKey: key, ttl: ttl)
    }
}
