extension EntryTable {
    /// Removes every entry in positions `start..<start + bucketLimit` of one
    /// stripe for which `reason` returns a reason. `start` is a position
    /// (`stripe << 32 | bucket`); 0 begins the scan. Returns the position to
    /// continue from, or nil when the scan reached the end of the last stripe.
    /// O(bucketLimit).
    func sweep(
        from start: Int, bucketLimit: Int,
        into evicted: inout EvictedEntries<Key, Value>,
        reason: (Int32) -> EvictionReason?
    ) -> Int? {
        let stripeIndex = Self.stripeIndex(ofPosition: start)
        let stripe = stripe(stripeIndex)
        let bucketCount = stripe.pointee.bucketMask + 1
        var bucket = Self.bucket(ofPosition: start)
        let end = Swift.min(bucket + bucketLimit, bucketCount)
        while bucket < end {
            let word = stripe.pointee.buckets[bucket]
            if word != 0 {
                let slot = Self.slot(of: word)
                if let why = reason(slot) {
                    remove(slot: slot, bucket: Self.position(stripe: stripeIndex, bucket: bucket), reason: why, into: &evicted)
                    continue  // a later entry may have shifted into this bucket
                }
            }
            bucket += 1
        }
        if end < bucketCount { return Self.position(stripe: stripeIndex, bucket: end) }
        return stripeIndex + 1 < Self.stripeCount ? Self.position(stripe: stripeIndex + 1, bucket: 0) : nil
    }

    /// Hands every entry to a ``DetachedEntries`` and starts empty, in
    /// O(stripes): the caller releases the old entries after unlocking.
    func detachAll() -> DetachedEntries<Key, Value> {
        withAllStripesLocked {
            let detached = DetachedEntries(entries: entries, stripes: takeStripeIndexes(), count: count)
            (entries, entryCapacity, handedOut, freeSlots) = (.allocate(capacity: 0), 0, 0, [])
            costs.removeAll()
            expiries.removeAll()
            graces.removeAll()
            queue.removeAll()
            count = 0
            totalCost = 0
            expiringCount = 0
            return detached
        }
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
