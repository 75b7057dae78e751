extension EntryTable {
    // MARK: - Expiry
    //
    // An entry is *fresh* until its time to live or the age limit passes: then
    // it is *expired*, and no lookup returns it. An expired entry with a grace
    // (``LoadOptions/staleIfError``) is *kept* until the grace passes too, so a
    // failing load can return it; only then must it go.

    /// Makes sure the expiry column exists if `expiry` needs it. Readers read
    /// the column with only a stripe lock held, so it appears with every stripe
    /// locked: call this holding the policy lock and no stripe lock.
    @inlinable
    func prepareExpiryColumn(for expiry: Int64) {
        if expiry != .max && expiries.values == nil {
            withAllStripesLocked { expiries.allocate(entryCapacity) }
        }
    }

    /// Sets the expiry of `slot`, after ``prepareExpiryColumn(for:)``. The value
    /// is stored through the column's buffer rather than by mutating the
    /// column, so readers of other slots do not race with it. The caller holds
    /// the policy lock, and the slot's stripe lock if the slot is in the index.
    @inlinable
    func setExpiry(_ expiry: Int64, at slot: Int32) {
        if expiries.values != nil { expiries.store(expiry, at: slot) }
    }

    /// Whether the entry is past its time to live or the age limit.
    @inlinable
    func isExpired(_ slot: Int32, now: Int64) -> Bool {
        now >= expiries[slot] || (ageLimit != .max && now &- entries[Int(slot)].writeTime >= ageLimit)
    }

    /// Whether the entry is past its expiry and its grace: it must go.
    @inlinable
    func isPastGrace(_ slot: Int32, now: Int64) -> Bool {
        isExpired(slot, now: now &- graces[slot])
    }

    /// How long before `now` the entry at `slot` was last written.
    @inlinable
    func age(of slot: Int32, now: Int64) -> Int64 {
        now &- entries[Int(slot)].writeTime
    }

    /// Whether the entry may have expired, so the clock must be read.
    @inlinable
    func canExpire(_ slot: Int32) -> Bool {
        ageLimit != .max || expiries[slot] != .max
    }

    @usableFromInline
    func isDiscarded(_ value: Value) -> Bool {
        (value as? any DiscardableContent)?.isContentDiscarded ?? false
    }

    /// Why the entry at `slot` must go now, if it must: expired past its
    /// grace, or discarded.
    @inlinable
    func staleReason(_ slot: Int32, now: Int64?) -> EvictionReason? {
        if canExpire(slot), isPastGrace(slot, now: now ?? clock.nanosecondsNow) {
            return .expired
        }
        if checksDiscardable, isDiscarded(entries[Int(slot)].value) {
            return .discarded
        }
        return nil
    }

    /// Whether a lookup may return the entry: fresh and not discarded.
    @inlinable
    func isLive(_ slot: Int32, now: Int64?) -> Bool {
        if canExpire(slot), isExpired(slot, now: now ?? clock.nanosecondsNow) {
            return false
        }
        return !(checksDiscardable && isDiscarded(entries[Int(slot)].value))
    }
}
