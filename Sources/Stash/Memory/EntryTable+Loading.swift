extension EntryTable {
    // MARK: - Lookups for loads

    /// Looks `key` up for a get-or-load: a fresh entry is a hit (and says
    /// whether it is due for a refresh); an expired one still in its grace is
    /// a miss that carries the stale value for the fail-safe; anything else is
    /// a miss, and an entry past its grace is removed.
    ///
    /// - Parameter refreshAfter: Nanoseconds after its write at which a hit is
    ///   due for a refresh; `Int64.max` for never.
    @inlinable
    func loadLookup(
        forKey key: Key, hash: UInt32, refreshAfter: Int64, evicted: inout EvictedEntries<Key, Value>
    ) -> LoadLookup<Value> {
        let (slot, bucket) = find(key, hash: hash)
        guard slot >= 0 else {
            misses &+= 1
            return .miss
        }
        let now = canExpire(slot) || refreshAfter != .max ? clock.nanosecondsNow : 0
        if !isLive(slot, now: now) {
            misses &+= 1
            if let reason = staleReason(slot, now: now) {
                remove(slot: slot, bucket: bucket, reason: reason, into: &evicted)
                return .miss
            }
            return .stale(entries[Int(slot)].value)
        }
        queue.access(slot)
        hits &+= 1
        let entry = entries[Int(slot)]
        return .fresh(entry.value, isDue: refreshAfter != .max && now &- entry.writeTime >= refreshAfter)
    }

    /// `key`'s live value, without counting or touching recency.
    func peekValue(forKey key: Key, hash: UInt32) -> Value? {
        let slot = find(key, hash: hash).slot
        return slot >= 0 && isLive(slot, now: nil) ? entries[Int(slot)].value : nil
    }

    /// Makes `key`'s entry expire now, keeping it for its grace. Returns whether
    /// there was a fresh entry.
    func expire(forKey key: Key, hash: UInt32, evicted: inout EvictedEntries<Key, Value>) -> Bool {
        let (slot, bucket) = find(key, hash: hash)
        guard slot >= 0 else { return false }
        let now = clock.nanosecondsNow
        guard isLive(slot, now: now) else { return false }
        guard graces[slot] > 0 else {
            remove(slot: slot, bucket: bucket, reason: .removed, into: &evicted)
            return true
        }
        if expiries[slot] == .max { expiringCount += 1 }
        prepareExpiryColumn(for: now)
        withStripeLocked(hash: hash) { setExpiry(now, at: slot) }
        return true
    }
}

/// What a get-or-load lookup found.
@usableFromInline
enum LoadLookup<Value> {
    /// A fresh value; `isDue` when it is old enough to be refreshed in the background.
    case fresh(Value, isDue: Bool)
    /// An expired value kept for its grace: returned only if a load fails.
    case stale(Value)
    /// Nothing usable.
    case miss
}

extension LoadLookup: Sendable where Value: Sendable {}
