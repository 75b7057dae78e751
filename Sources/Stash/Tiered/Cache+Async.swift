/// The async forms of ``Cache``'s operations.
///
/// A memory hit returns without suspending. Disk work runs on the disk tier's
/// dispatch queue, so it never blocks a thread of Swift's cooperative pool.
/// With a remote tier, these forms also read it, and wait for their changes to
/// reach it (see `CacheCore+Remote.swift`); a remote failure never fails them.
extension Cache {
    /// The value for `key`, from memory, disk, or the remote tier (then promoted
    /// into the local tiers). See `value(forKey:)`.
    // Always inlined: a memory hit is then specialised for the caller's `Value`
    // and makes no async call (see `MemoryCache.value(forKey:options:orLoad:)`).
    @inlinable @inline(__always)
    public func value(forKey key: String) async throws(StashError) -> Value? {
        if let hit = memory?.value(forKey: key) {
            return hit
        }
        guard hasTiersBelowMemory else { return nil }
        return try await core.awaitValueBelowMemory(forKey: key)
    }

    /// Whether any tier, the remote one included, holds `key`. See `contains(_:)`.
    public func contains(_ key: String) async throws(StashError) -> Bool {
        try await core.contains(key)
    }

    /// Stores `value` in every tier, returning once the remote tier has it (or
    /// failed to take it). See `setValue(_:forKey:ttl:)`.
    public func setValue(_ value: Value, forKey key: String, ttl: Duration? = nil) async throws(StashError) {
        try await core.setValue(value, forKey: key, ttl: ttl)
    }

    /// Removes `key` from every tier. See `removeValue(forKey:)`.
    ///
    /// - Returns: Whether any tier, the remote one included, held a value.
    @discardableResult
    public func removeValue(forKey key: String) async throws(StashError) -> Bool {
        try await core.removeValue(forKey: key)
    }

    /// Removes every entry from every tier. See `removeAll()`.
    public func removeAll() async throws(StashError) {
        try await core.removeAll(progress: { _, _ in })
    }

    /// Removes every entry, reporting the disk tier's progress on its queue.
    /// See `removeAll(progress:)`.
    public func removeAll(progress: @escaping @Sendable (_ removed: Int, _ total: Int) -> Void) async throws(StashError) {
        try await core.removeAll(progress: progress)
    }
}
