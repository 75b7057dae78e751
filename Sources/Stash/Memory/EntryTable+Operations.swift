extension EntryTable {
    // MARK: - Operations

    /// Looks `key` up, counting a hit or a miss. An expired or discarded entry
    /// is a miss, and is removed unless it is kept for its grace.
    @inlinable
    func value(forKey key: Key, hash: UInt32, evicted: inout EvictedEntries<Key, Value>) -> Value? {
        let (slot, bucket) = find(key, hash: hash)
        guard slot >= 0 else {
            misses &+= 1
            return nil
        }
        if !isLive(slot, now: nil) {
            if let reason = staleReason(slot, now: nil) {
                remove(slot: slot, bucket: bucket, reason: reason, into: &evicted)
            }
            misses &+= 1
            return nil
        }
        queue.access(slot)
        hits &+= 1
        return entries[Int(slot)].value
    }

    /// Looks `key` up as ``value(forKey:hash:evicted:)`` does, recency included, without
    /// counting a hit or a miss: a second look by a caller whose first one was counted.
    @inlinable
    func uncountedValue(forKey key: Key, hash: UInt32, evicted: inout EvictedEntries<Key, Value>) -> Value? {
        let (counted, missed) = (hits, misses)
        defer { (hits, misses) = (counted, missed) }
        return value(forKey: key, hash: hash, evicted: &evicted)
    }

    /// Whether `key` is present and fresh, without counting or touching recency.
    @inlinable
    func contains(_ key: Key, hash: UInt32) -> Bool {
        let slot = find(key, hash: hash).slot
        return slot >= 0 && isLive(slot, now: nil)
    }

    /// Stores `value`, first evicting in policy order until it fits within the limits.
    ///
    /// - Parameters:
    ///   - ttl: Nanoseconds to live, or nil for no limit of its own.
    ///   - grace: Nanoseconds the entry is kept past its expiry, as a fail-safe for loads.
    @inlinable
    func setValue(
        _ value: Value, forKey key: Key, hash: UInt32, cost: Int, ttl: Int64?, grace: Int64 = 0, now: Int64,
        evicted: inout EvictedEntries<Key, Value>
    ) {
        var (slot, bucket) = find(key, hash: hash)
        if let rejection = rejection(cost: cost, ttl: ttl) {
            if slot >= 0 {
                remove(slot: slot, bucket: bucket, reason: .replaced, into: &evicted)
            }
            evicted.append(key: key, value: value, reason: rejection)
            return
        }
        let expiry = ttl.map { now.addingClamped($0) } ?? .max
        prepareExpiryColumn(for: expiry)
        let stripe = Self.stripeIndex(of: hash)
        if slot >= 0 {
            // Take the old cost out first, so making room never overflows.
            totalCost -= costs[slot]
            makeRoom(count: 0, cost: cost, protecting: slot, into: &evicted)
            let entry = entries + Int(slot)
            lockStripe(stripe)
            // The copy keeps the old value alive past the lock: it is released
            // with `evicted`, after the caller unlocks.
            let oldValue = entry.pointee.value
            entry.pointee.value = value
            entry.pointee.writeTime = now
            if expiries[slot] != .max { expiringCount -= 1 }
            setExpiry(expiry, at: slot)
            unlockStripe(stripe)
            evicted.append(key: key, value: oldValue, reason: .replaced)
            totalCost += cost
            if expiry != .max { expiringCount += 1 }
            costs.set(cost, at: slot, arenaCapacity: entryCapacity)
            graces.set(grace, at: slot, arenaCapacity: entryCapacity)
            queue.overwrite(slot, cost: cost)
        } else {
            let countBefore = count
            queue.willInsert(hash: hash, cost: cost)
            makeRoom(count: 1, cost: cost, protecting: -1, into: &evicted)
            // The new entry is not yet in any index, so no reader can see its
            // slot until the bucket is set below, under the stripe lock.
            slot = allocateSlot()
            (entries + Int(slot)).initialize(to: Entry(key: key, value: value, writeTime: now))
            costs.set(cost, at: slot, arenaCapacity: entryCapacity)
            setExpiry(expiry, at: slot)
            graces.set(grace, at: slot, arenaCapacity: entryCapacity)
            lockStripe(stripe)
            let mustGrow = stripeMustGrow(hash: hash)
            if mustGrow { growIndex(hash: hash) }
            if mustGrow || count != countBefore {
                // Growing moves every bucket, and evictions may have shifted some.
                bucket = find(key, hash: hash).bucket
            }
            setBucket(bucket, to: UInt64(hash) << 32 | UInt64(UInt32(slot &+ 1)))
            unlockStripe(stripe)
            count += 1
            totalCost += cost
            if expiry != .max { expiringCount += 1 }
            queue.insert(slot, hash: hash, cost: cost)
        }
    }

    /// Removes `key`'s entry, reporting it with `reason`. Returns its value.
    @inlinable
    func removeValue(
        forKey key: Key, hash: UInt32, reason: EvictionReason, evicted: inout EvictedEntries<Key, Value>
    ) -> Value? {
        let (slot, bucket) = find(key, hash: hash)
        guard slot >= 0 else { return nil }
        let isLive = isLive(slot, now: nil)
        let value = entries[Int(slot)].value
        remove(slot: slot, bucket: bucket, reason: staleReason(slot, now: nil) ?? reason, into: &evicted)
        return isLive ? value : nil
    }

    /// Takes the entry at `slot` out of the index, the queue and the arena.
    @inlinable
    func remove(slot: Int32, bucket: Int, reason: EvictionReason, into evicted: inout EvictedEntries<Key, Value>) {
        let hash = UInt32(truncatingIfNeeded: word(at: bucket) >> 32)
        let stripe = Self.stripeIndex(ofPosition: bucket)
        // Under the stripe lock: once it is released no reader can find the
        // entry, and any reader that found it holds its own copy of the value.
        lockStripe(stripe)
        clearBucket(bucket)
        let entry = (entries + Int(slot)).move()
        unlockStripe(stripe)
        queue.remove(slot, hash: hash, isEviction: reason == .countLimit || reason == .costLimit)
        freeSlots.append(slot)
        count -= 1
        totalCost -= costs[slot]
        if expiries[slot] != .max { expiringCount -= 1 }
        evictions.record(reason)
        evicted.append(key: entry.key, value: entry.value, reason: reason)
    }

    @inlinable
    func remove(slot: Int32, reason: EvictionReason, into evicted: inout EvictedEntries<Key, Value>) {
        remove(slot: slot, bucket: bucket(ofSlot: slot), reason: reason, into: &evicted)
    }
}
