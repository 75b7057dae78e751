extension EntryTable {
    /// Removes every entry in buckets `start..<start + bucketLimit` for which
    /// `reason` returns a reason. Returns the bucket to continue from, or nil
    /// when the scan reached the end of the index. O(bucketLimit).
    func sweep(
        from start: Int, bucketLimit: Int,
        into evicted: inout EvictedEntries<Key, Value>,
        reason: (Int32) -> EvictionReason?
    ) -> Int? {
        let end = Swift.min(start + bucketLimit, bucketMask + 1)
        var bucket = start
        while bucket < end {
            let word = buckets[bucket]
            if word != 0 {
                let slot = Self.slot(of: word)
                if let why = reason(slot) {
                    remove(slot: slot, bucket: bucket, reason: why, into: &evicted)
                    continue  // a later entry may have shifted into this bucket
                }
            }
            bucket += 1
        }
        return end > bucketMask ? nil : end
    }

    /// Hands every entry to a ``DetachedEntries`` and starts empty, in O(1):
    /// the caller releases the old entries after unlocking.
    func detachAll() -> DetachedEntries<Key, Value> {
        let detached = DetachedEntries(entries: entries, buckets: buckets, bucketCount: bucketMask + 1, count: count)
        occupied.deallocate()
        (entries, entryCapacity, handedOut, freeSlots) = (.allocate(capacity: 0), 0, 0, [])
        (buckets, occupied, bucketMask) = Self.emptyIndex(bucketCount: Self.initialBucketCount)
        costs.removeAll()
        expiries.removeAll()
        graces.removeAll()
        queue.removeAll()
        count = 0
        totalCost = 0
        expiringCount = 0
        return detached
    }

    /// The live, fresh entries in eviction order. O(n).
    func snapshot() -> [(key: Key, value: Value, cost: Int)] {
        var result: [(key: Key, value: Value, cost: Int)] = []
        result.reserveCapacity(count)
        let now = clock.nanosecondsNow
        queue.forEachInEvictionOrder { slot in
            if isLive(slot, now: now) {
                let entry = entries[Int(slot)]
                result.append((entry.key, entry.value, costs[slot]))
            }
            return true
        }
        return result
    }
}
