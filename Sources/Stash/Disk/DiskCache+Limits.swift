extension DiskCache {
    /// The most entries the cache holds. Strict for this instance: after a
    /// write returns, ``count`` ≤ `countLimit`.
    ///
    /// Defaults to `Int.max` (no limit). Lowering it trims at once, least
    /// recently used first; a failure of that trim is logged. A negative value
    /// is logged and treated as 0.
    ///
    /// - Complexity: O(1), plus O(log n) per evicted entry. Thread-safe; blocks on disk I/O when lowered.
    public var countLimit: Int {
        get { core.limits.count }
        set { core.setCountLimit(newValue) }
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
        get { core.limits.size }
        set { core.setSizeLimit(newValue) }
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
            let nanos = core.limits.age
            return nanos == .max ? nil : .nanoseconds(nanos)
        }
        set { core.setAgeLimit(newValue) }
    }

    /// Free bytes to keep on the cache's volume (read with `statvfs`). The
    /// background trim evicts, least recently used first, until there are.
    ///
    /// Defaults to 0: no limit. Not strict: other programs change the free space.
    /// A negative value is logged and treated as 0.
    ///
    /// - Complexity: O(1). Thread-safe.
    public var freeDiskSpaceLimit: Int {
        get { core.limits.freeDiskSpace }
        set { core.setFreeDiskSpaceLimit(newValue) }
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
        get { core.autoTrimInterval }
        set { core.setAutoTrimInterval(newValue) }
    }

    // MARK: - Trimming

    /// Removes the least recently used entries until at most `maxCount` remain.
    ///
    /// - Throws: ``StashError`` on a disk failure; entries removed before it stay removed.
    /// - Complexity: O(removed × log n), in batched transactions. Blocks on disk I/O. Thread-safe.
    public func trim(toCount maxCount: Int) throws(StashError) {
        try core.trim(toCount: maxCount)
    }

    /// Removes the least recently used entries until the values take at most `maxSize` bytes.
    ///
    /// - Throws: ``StashError`` on a disk failure; entries removed before it stay removed.
    /// - Complexity: O(removed × log n), in batched transactions. Blocks on disk I/O. Thread-safe.
    public func trim(toSize maxSize: Int) throws(StashError) {
        try core.trim(toSize: maxSize)
    }

    /// Removes every entry written `age` or longer ago. Ages count from the
    /// last write, as for ``ageLimit``; reads don't renew them.
    ///
    /// - Throws: ``StashError`` on a disk failure; entries removed before it stay removed.
    /// - Complexity: O(removed × log n), in batched transactions. Blocks on disk I/O. Thread-safe.
    public func trim(toAge age: Duration) throws(StashError) {
        try core.trim(toAge: age)
    }

    /// Removes expired entries now rather than at the next background trim.
    ///
    /// - Throws: ``StashError`` on a disk failure.
    /// - Complexity: O(removed × log n). Blocks on disk I/O. Thread-safe.
    public func removeExpired() throws(StashError) {
        try core.removeExpired()
    }
}
