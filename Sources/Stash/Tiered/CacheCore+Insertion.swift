/// Storing a value only where there is none: the create of a key-value store (Hummingbird's
/// `PersistDriver.create`, a lock-free claim, an idempotency key).
extension CacheCore {
    /// See ``Cache/insertValue(_:forKey:ttl:)``.
    func insertValue(_ value: Value, forKey key: String, ttl: Duration?) async throws(StashError) -> Bool {
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
