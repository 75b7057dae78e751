extension MemoryCache {
    /// The most entries the cache holds. Strict: after any call returns,
    /// ``count`` ≤ `countLimit`.
    ///
    /// Defaults to `Int.max` (no limit). Lowering it evicts at once, in policy
    /// order, with reason ``EvictionReason/countLimit``. A negative value is
    /// logged and treated as 0, which stores nothing.
    ///
    /// - Complexity: O(1), plus O(1) per evicted entry. Thread-safe.
    public var countLimit: Int {
        get { core.countLimit }
        set { core.countLimit = newValue }
    }

    /// The most total cost the cache holds. Strict: after any call returns,
    /// ``totalCost`` ≤ `costLimit`.
    ///
    /// Defaults to `Int.max` (no limit). Lowering it evicts at once, in policy
    /// order, with reason ``EvictionReason/costLimit``. A negative value is
    /// logged and treated as 0, which stores only entries of cost 0.
    ///
    /// - Complexity: O(1), plus O(1) per evicted entry. Thread-safe.
    public var costLimit: Int {
        get { core.costLimit }
        set { core.costLimit = newValue }
    }

    /// How long after its last write an entry expires. Strict: an entry older
    /// than this is never returned.
    ///
    /// Defaults to `nil` (no limit). Applies to entries already stored.
    /// Setting it removes the entries it makes expired, in locked batches, with
    /// reason ``EvictionReason/expired``. A negative value is logged and treated
    /// as 0, under which every entry is expired.
    ///
    /// - Complexity: O(1) when raised or cleared; O(n) when lowered. Thread-safe.
    public var ageLimit: Duration? {
        get { core.ageLimit }
        set { core.ageLimit = newValue }
    }

    /// How often the background sweep removes expired entries and entries whose
    /// content was discarded. Defaults to 5 seconds; `nil` turns it off.
    ///
    /// The sweep works in locked batches of 1,024 index buckets, releasing the
    /// lock between them, and skips the scan entirely when no entry can expire.
    /// Its timer holds the cache weakly and stops when the cache is deallocated.
    /// A zero or negative interval is logged and turns the sweep off.
    ///
    /// - Complexity: Setting it is O(1). Thread-safe.
    public var autoTrimInterval: Duration? {
        get { core.autoTrimInterval }
        set { core.autoTrimInterval = newValue }
    }

    // MARK: - Trimming

    /// Evicts entries in policy order until at most `maxCount` remain.
    ///
    /// Reason: ``EvictionReason/countLimit``. A negative `maxCount` counts as 0.
    ///
    /// - Complexity: O(1) per evicted entry, all under the lock. Thread-safe.
    public func trim(toCount maxCount: Int) {
        core.trim(toCount: maxCount)
    }

    /// Evicts entries in policy order until the total cost is at most `maxCost`.
    ///
    /// Reason: ``EvictionReason/costLimit``. A negative `maxCost` counts as 0.
    ///
    /// - Complexity: O(1) per evicted entry, all under the lock. Thread-safe.
    public func trim(toCost maxCost: Int) {
        core.trim(toCost: maxCost)
    }

    /// Evicts the costliest entries first until the total cost is at most
    /// `maxCost`, like TMCache's `trimToCost:`. Among entries of equal cost,
    /// policy order decides.
    ///
    /// Reason: ``EvictionReason/costLimit``. A negative `maxCost` counts as 0.
    ///
    /// - Complexity: O(n log n) under the lock. Thread-safe.
    public func trimCostliest(toCost maxCost: Int) {
        core.trimCostliest(toCost: maxCost)
    }

    /// Removes every entry written `age` or longer ago, and every entry already
    /// expired.
    ///
    /// Reason: ``EvictionReason/expired``. A negative `age` counts as 0.
    ///
    /// - Complexity: O(n), in locked batches of 1,024 buckets. Thread-safe.
    public func trim(toAge age: Duration) {
        core.trim(toAge: age)
    }

    /// Removes expired entries, and entries whose content was discarded, now
    /// rather than at the next background sweep.
    ///
    /// - Complexity: O(n), in locked batches of 1,024 buckets; O(1) when no
    ///   entry can expire. Thread-safe.
    public func removeExpired() {
        core.removeStaleEntries()
    }
}
