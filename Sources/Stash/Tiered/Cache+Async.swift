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
        return try await core.awaitValueBelowMemory(forKey: key, writingMemory: writeMemory)
    }

    /// Whether any tier, the remote one included, holds `key`. See `contains(_:)`.
    public func contains(_ key: String) async throws(StashError) -> Bool {
        try await core.contains(key)
    }

    /// Stores `value` in every tier, returning once the remote tier has it (or
    /// failed to take it). See `setValue(_:forKey:ttl:)`.
    // Inlinable, so that a memory-only cache's write is specialised for the caller's `Value`.
    @inlinable
    public func setValue(_ value: Value, forKey key: String, ttl: Duration? = nil) async throws(StashError) {
        try await core.setValue(value, forKey: key, ttl: ttl, writingMemory: writeMemory)
    }

    /// Stores each value in every tier, all with one time to live, returning once the remote tier
    /// has them (or failed to take them): as many `setValue(_:forKey:ttl:)` calls, at the cost of
    /// one disk transaction per 128 keys (on the disk tier's queue) and, when the remote tier is
    /// ``RemoteCacheBatchWriting`` (Redis), one round trip for all of them.
    ///
    /// Each key is written as `setValue` writes it, under its own lock, so a reader sees each key
    /// change on its own; the keys of one chunk of 128 appear on disk together. Each key's changes
    /// reach the remote tier in the order they reached the local tiers, also when other calls
    /// change some of the same keys meanwhile (the batch then goes out in several round trips, as
    /// its keys' turns come).
    ///
    /// - Parameters:
    ///   - values: The values, by key; each key any non-empty string.
    ///   - ttl: How long each entry lives, in every tier. Defaults to `nil` (no expiry).
    /// - Throws: ``StashError``: `.invalidKey` for an empty key, before anything is written;
    ///   `.closed` after `close()`; otherwise the first error of a value the disk tier refused
    ///   (an encoding failure, a value over the size limit, a disk failure), once every other
    ///   value is written and sent. A refused value fails alone: its key is dropped from memory
    ///   and keeps on disk what it held before, as after a failed `setValue`; a failed transaction
    ///   refuses every value of its chunk. A remote failure never throws: it marks the keys stale,
    ///   as for `setValue`.
    /// - Complexity: O(n) memory writes plus one disk transaction per 128 values, on the disk
    ///   tier's queue; never blocks the calling thread. Thread-safe.
    public func setValues(_ values: [String: Value], ttl: Duration? = nil) async throws(StashError) {
        try await core.setValues(values, ttl: ttl)
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
