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
        guard let remoteLink else {
            guard let disk else { return try insertLocalValue(value, forKey: key, ttl: ttl) }
            return try await disk.run { [self] () throws(StashError) in try insertLocalValue(value, forKey: key, ttl: ttl) }
        }
        // A local value may not have reached the remote tier yet: it answers first.
        let generation = stripes.generation(for: key)
        let ticket: RemoteWriteOrder.Ticket? = try await localHolds(key) { [self] () throws(StashError) in
            try stripes.withLock(for: key) { () -> RemoteWriteOrder.Ticket in remoteLink.order.enqueue(key) }
        }
        guard let ticket else { return false }
        guard try await remoteLink.insert(value, ttl: ttl, ticket: ticket) else { return false }
        await promote(RemoteCacheEntry(value: value, ttl: ttl), forKey: key, ifUnchangedSince: generation)
        return true
    }

    /// The local insertion: under `key`'s lock, `false` when memory or disk holds it, else the write.
    private func insertLocalValue(_ value: Value, forKey key: String, ttl: Duration?) throws(StashError) -> Bool {
        try stripes.withChange(for: key) { () throws(StashError) -> Bool in
            if memory?.contains(key) == true { return false }
            if let disk, try disk.contains(key) { return false }
            loadTickets.withLock { $0.void(key) }
            try _writeLocal(value, forKey: key, ttl: ttl, grace: nil)
            return true
        }
    }

    /// `nil` when memory or disk holds `key`, else what `next` returns (on the disk queue with a disk tier).
    private func localHolds<Result: Sendable>(
        _ key: String, else next: @escaping @Sendable () throws(StashError) -> Result
    ) async throws(StashError) -> Result? {
        if memory?.contains(key) == true { return nil }
        guard let disk else {
            try DiskCache<Value>.validate(key)
            return try next()
        }
        return try await disk.run { () throws(StashError) -> Result? in try disk.contains(key) ? nil : next() }
    }
}
