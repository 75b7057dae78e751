extension EntryTable {
    // MARK: - Expiry

    @inlinable
    func isExpired(_ slot: Int32, now: Int64) -> Bool {
        now >= expiries[slot] || (ageLimit != .max && now &- entries[Int(slot)].writeTime >= ageLimit)
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

    /// Why the entry at `slot` must go now, if it must: expired or discarded.
    @inlinable
    func staleReason(_ slot: Int32, now: Int64?) -> EvictionReason? {
        if canExpire(slot), isExpired(slot, now: now ?? clock.nanosecondsNow) {
            return .expired
        }
        if checksDiscardable, isDiscarded(entries[Int(slot)].value) {
            return .discarded
        }
        return nil
    }
}
