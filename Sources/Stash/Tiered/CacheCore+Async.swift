/// The async forms of ``Cache``'s operations (a memory hit is answered by the facade).
///
/// A memory hit returns without suspending. Disk work runs on the disk tier's
/// dispatch queue, so it never blocks a thread of Swift's cooperative pool.
/// With a remote tier, these forms also read it, and wait for their changes to
/// reach it (see `Cache+Remote.swift`); a remote failure never fails them.
extension CacheCore {
    /// The async `value(forKey:)` after a memory miss: from the remote tier
    /// or disk, promoted into the local tiers.
    func awaitValueBelowMemory(forKey key: String) async throws(StashError) -> Value? {
        try await awaitValueBelowMemory(forKey: key, writingMemory: writeMemory)
    }

    /// ``awaitValueBelowMemory(forKey:)``, a disk hit read on the caller's thread promoted with
    /// `writeMemory` (see ``MemoryWrite``).
    @usableFromInline
    func awaitValueBelowMemory(forKey key: String, writingMemory writeMemory: MemoryWrite) async throws(StashError) -> Value? {
        if let remoteLink { return try await valueThroughRemote(forKey: key, remoteLink) }
        guard let disk else { return nil }
        if case .done(let value) = try valueBelowMemoryOnCallerThread(forKey: key, disk, writingMemory: writeMemory) { return value }
        return try await disk.run { [self] () throws(StashError) in try valueBelowMemory(forKey: key) }
    }

    /// ``valueBelowMemory(forKey:)`` on the caller's thread when it can be settled there without
    /// waiting: the key's stripe lock is free, no invalidation of the key is under way, and the
    /// disk tier answers from a pooled reader (see `DiskCache.valueWithMetadataOnCallerThread`).
    /// `.needsIOQueue` otherwise, having counted nothing: the hop to the disk tier's queue and
    /// back costs several times the read (the figures: docs/benchmarks.md, issue #27's store).
    private func valueBelowMemoryOnCallerThread(
        forKey key: String, _ disk: DiskCache<Value>, writingMemory writeMemory: MemoryWrite
    ) throws(StashError) -> DiskCallerThreadRead<Value> {
        let read = try stripes.withLockIfFreeUnlessInvalidating(for: key) {
            () throws(StashError) -> DiskCallerThreadRead<Value>? in
            // As in `valueBelowMemory`: another thread may have promoted or written the key.
            if let hit = memory?.uncountedValue(forKey: key) { return .done(hit) }
            switch try disk.valueWithMetadataOnCallerThread(forKey: key) {
            case .done(let found?):
                promote(found.value, forKey: key, encodedSize: found.size, expiration: found.expiration, writingMemory: writeMemory)
                return .done(found.value)
            case .done(nil):
                return .done(nil)
            case .needsIOQueue:
                return .needsIOQueue
            }
        }
        return read ?? .needsIOQueue
    }

    /// Whether any tier, the remote one included, holds `key`. See `Cache.contains(_:)`.
    func contains(_ key: String) async throws(StashError) -> Bool {
        if let remoteLink { return try await containsThroughRemote(key, remoteLink) }
        if memory?.contains(key) == true { return true }
        guard let disk else { return false }
        return try await disk.contains(key)
    }

    /// Stores `value` in every tier, returning once the remote tier has it (or
    /// failed to take it). See `setValue(_:forKey:ttl:)`.
    /// Memory-only, memory is written with `writeMemory` (see ``MemoryWrite``); with a disk tier
    /// the write runs on its queue, unspecialised beside the disk's transaction.
    @usableFromInline
    func setValue(_ value: Value, forKey key: String, ttl: Duration?, writingMemory writeMemory: MemoryWrite) async throws(StashError) {
        if let remoteLink { return try await setValueThroughRemote(value, forKey: key, ttl: ttl, remoteLink) }
        guard let disk else {
            try synchronously { () throws(StashError) in try setValue(value, forKey: key, ttl: ttl, writingMemory: writeMemory) }
            return
        }
        try await disk.run { [self] () throws(StashError) in try setValue(value, forKey: key, ttl: ttl, writingMemory: self.writeMemory) }
    }

    /// Removes `key` from every tier. See `removeValue(forKey:)`.
    ///
    /// - Returns: Whether any tier, the remote one included, held a value.
    @discardableResult
    func removeValue(forKey key: String) async throws(StashError) -> Bool {
        if let remoteLink { return try await removeValueThroughRemote(forKey: key, remoteLink) }
        guard let disk else { return try synchronously { () throws(StashError) in try removeValue(forKey: key) } }
        return try await disk.run { [self] () throws(StashError) in try removeValue(forKey: key) }
    }

    /// Removes every entry, reporting the disk tier's progress on its queue.
    /// See `removeAll(progress:)`.
    func removeAll(progress: @escaping @Sendable (_ removed: Int, _ total: Int) -> Void) async throws(StashError) {
        if let remoteLink { return try await removeAllThroughRemote(progress: progress, remoteLink) }
        guard let disk else { return try synchronously { () throws(StashError) in try removeAll(progress: progress) } }
        try await disk.run { [self] () throws(StashError) in try removeAll(progress: progress) }
    }
}

/// Calls a synchronous overload from an async context, where Swift would
/// otherwise pick the async one. Used for the memory-only case, which never blocks.
private func synchronously<Result>(_ body: () throws(StashError) -> Result) throws(StashError) -> Result {
    try body()
}
