extension DiskCache {
    /// The most entries the cache holds. Strict for this instance: after a
    /// write returns, ``totalCount`` ≤ `countLimit`.
    ///
    /// Defaults to `Int.max` (no limit). Lowering it trims at once, least
    /// recently used first; a failure of that trim is logged. A negative value
    /// is logged and treated as 0.
    ///
    /// - Complexity: O(1), plus O(log n) per evicted entry. Thread-safe; blocks on disk I/O when lowered.
    public var countLimit: Int {
        get { core.lock.withLock { core.countLimit } }
        set {
            let limit = validated(newValue, "countLimit")
            trimLogging { core, storage throws(StashError) in
                core.countLimit = limit
                try core.enforceSizeLimits(storage)
            }
        }
    }

    /// The most bytes of values the cache holds. Strict for this instance:
    /// after a write returns, ``totalSize`` ≤ `sizeLimit`, and a value larger
    /// than the limit is refused with ``StashError/Code/valueTooLarge``.
    ///
    /// Defaults to `Int.max` (no limit). Lowering it trims at once, least
    /// recently used first; a failure of that trim is logged. A negative value
    /// is logged and treated as 0.
    ///
    /// - Complexity: O(1), plus O(log n) per evicted entry. Thread-safe; blocks on disk I/O when lowered.
    public var sizeLimit: Int {
        get { core.lock.withLock { core.sizeLimit } }
        set {
            let limit = validated(newValue, "sizeLimit")
            trimLogging { core, storage throws(StashError) in
                core.sizeLimit = limit
                try core.enforceSizeLimits(storage)
            }
        }
    }

    /// How long after its last write an entry expires. Strict: an older entry
    /// is never returned. Defaults to `nil`: never.
    ///
    /// The background trim removes old entries; lowering the limit also
    /// removes them at once. A negative value is logged and treated as 0.
    ///
    /// - Complexity: O(1); O(removed) when lowered. Thread-safe.
    public var ageLimit: Duration? {
        get {
            let nanos = core.lock.withLock { core.ageLimit }
            return nanos == .max ? nil : .nanoseconds(nanos)
        }
        set {
            var nanos = newValue?.nanosecondsClamped ?? .max
            if nanos < 0 {
                core.logger.warning("ageLimit must not be negative; using 0")
                nanos = 0
            }
            trimLogging { core, storage throws(StashError) in
                core.ageLimit = nanos
                if nanos != .max {
                    _ = try storage.trim(toAge: .nanoseconds(nanos))
                }
            }
        }
    }

    /// Free bytes to keep on the cache's volume (read with `statvfs`). The
    /// background trim evicts, least recently used first, until there are.
    ///
    /// Defaults to 0: no limit. Not strict: other programs change the free space.
    ///
    /// - Complexity: O(1). Thread-safe.
    public var freeDiskSpaceLimit: Int {
        get { core.lock.withLock { core.freeDiskSpaceLimit } }
        set {
            let limit = validated(newValue, "freeDiskSpaceLimit")
            core.lock.withLock { core.freeDiskSpaceLimit = limit }
        }
    }

    /// How often the background trim runs: saving access times, removing
    /// expired entries, keeping the limits and the free disk space, emptying
    /// the trash. Defaults to 60 seconds; `nil` turns it off.
    ///
    /// Its timer holds the cache weakly and stops when the cache is
    /// deallocated. Failures go to the cache's logger.
    ///
    /// - Complexity: O(1). Thread-safe.
    public var autoTrimInterval: Duration? {
        get { core.lock.withLock { core.autoTrimTimer.interval } }
        set { core.setAutoTrimInterval(newValue) }
    }

    // MARK: - Trimming

    /// Removes the least recently used entries until at most `maxCount` remain.
    ///
    /// - Throws: ``StashError`` on a disk failure; entries removed before it stay removed.
    /// - Complexity: O(removed × log n), in batched transactions. Blocks on disk I/O. Thread-safe.
    public func trim(toCount maxCount: Int) throws(StashError) {
        try core.withStorage { storage throws(StashError) in _ = try storage.trim(toCount: Swift.max(maxCount, 0)) }
    }

    /// Removes the least recently used entries until the values take at most `maxSize` bytes.
    ///
    /// - Throws: ``StashError`` on a disk failure; entries removed before it stay removed.
    /// - Complexity: O(removed × log n), in batched transactions. Blocks on disk I/O. Thread-safe.
    public func trim(toSize maxSize: Int) throws(StashError) {
        try core.withStorage { storage throws(StashError) in _ = try storage.trim(toSize: Swift.max(maxSize, 0)) }
    }

    /// Removes every entry written `age` or longer ago. Ages count from the
    /// last write, as for ``ageLimit``; reads don't renew them.
    ///
    /// - Throws: ``StashError`` on a disk failure; entries removed before it stay removed.
    /// - Complexity: O(removed × log n), in batched transactions. Blocks on disk I/O. Thread-safe.
    public func trim(toAge age: Duration) throws(StashError) {
        try core.withStorage { storage throws(StashError) in _ = try storage.trim(toAge: Swift.max(age, .zero)) }
    }

    /// Removes expired entries now rather than at the next background trim.
    ///
    /// - Throws: ``StashError`` on a disk failure.
    /// - Complexity: O(removed × log n). Blocks on disk I/O. Thread-safe.
    public func removeExpired() throws(StashError) {
        try core.withStorage { storage throws(StashError) in _ = try storage.removeExpired() }
    }

    // MARK: - Helpers

    private func validated(_ value: Int, _ name: String) -> Int {
        if value < 0 {
            core.logger.warning("\(name) must not be negative (got \(value)); using 0")
            return 0
        }
        return value
    }

    /// Runs a limit change and its trim under the lock, logging a failure:
    /// property setters cannot throw.
    private func trimLogging(_ body: (DiskCacheCore<Value>, KVStorage) throws(StashError) -> Void) {
        do {
            try core.withStorage { storage throws(StashError) in try body(core, storage) }
        } catch {
            core.logger.error("trimming to a new limit failed", metadata: ["error": "\(error)"])
        }
    }
}
