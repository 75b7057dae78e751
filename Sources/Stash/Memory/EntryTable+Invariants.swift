extension EntryTable {
    #if DEBUG
    /// Traps unless every structural invariant holds: the bitmap matches the
    /// buckets; every bucket points at a distinct live slot, carries its key's
    /// hash and is reachable from its home bucket; `count` equals the occupied
    /// buckets and the live slots; `totalCost` and `expiringCount` equal what
    /// the columns say; the limits hold; and the eviction queue holds exactly
    /// the live slots, each once.
    ///
    /// Compiled only in debug builds (a no-op otherwise). Tests call it, through
    /// `MemoryCache._checkInvariants()`, after each mutation.
    ///
    /// - Complexity: O(buckets + arena slots).
    @usableFromInline
    func _checkInvariants() {
        var live = [Bool](repeating: false, count: handedOut)
        var occupiedBuckets = 0
        var costSum = 0
        var expiring = 0
        for stripeIndex in 0..<Self.stripeCount {
            let stripe = stripe(stripeIndex)
            let bucketMask = stripe.pointee.bucketMask
            let buckets = stripe.pointee.buckets
            let bucketCount = bucketMask + 1
            precondition(bucketCount & bucketMask == 0, "the bucket count is a power of two")
            precondition(stripe.pointee.count * 4 <= bucketCount * 3, "each stripe's index is at most 3/4 full")
            var inStripe = 0
            for bucket in 0..<bucketCount {
                let word = buckets[bucket]
                precondition(Self.isOccupied(bucket, in: stripe) == (word != 0), "bitmap bit \(bucket) matches its bucket")
                guard word != 0 else { continue }
                occupiedBuckets += 1
                inStripe += 1
                let slot = Self.slot(of: word)
                precondition(slot >= 0 && Int(slot) < handedOut, "bucket \(bucket) points into the arena")
                precondition(!live[Int(slot)], "slot \(slot) has one bucket")
                live[Int(slot)] = true
                let hash = UInt32(truncatingIfNeeded: word >> 32)
                precondition(hash == Self.hash(entries[Int(slot)].key), "bucket \(bucket) carries its key's hash")
                precondition(Self.stripeIndex(of: hash) == stripeIndex, "bucket \(bucket) is in its hash's stripe")
                var probe = Int(hash) & bucketMask
                while probe != bucket {
                    precondition(buckets[probe] != 0, "bucket \(bucket) is reachable from its home bucket")
                    probe = (probe &+ 1) & bucketMask
                }
                costSum += costs[slot]
                if expiries[slot] != .max { expiring += 1 }
            }
            precondition(inStripe == stripe.pointee.count, "stripe \(stripeIndex) counts its entries")
        }
        precondition(occupiedBuckets == count, "count \(count) equals the \(occupiedBuckets) occupied buckets")
        precondition(handedOut - freeSlots.count == count, "every slot handed out is live or free")
        for slot in freeSlots {
            precondition(!live[Int(slot)], "free slot \(slot) is not live")
        }
        precondition(costSum == totalCost, "totalCost \(totalCost) equals the sum of costs \(costSum)")
        precondition(expiring == expiringCount, "expiringCount equals the entries with a time to live")
        precondition(count <= countLimit && totalCost <= costLimit, "the limits hold")
        var queued = 0
        queue.forEachInEvictionOrder { slot in
            precondition(slot >= 0 && Int(slot) < handedOut && live[Int(slot)], "queued slot \(slot) is live, once")
            live[Int(slot)] = false
            queued += 1
            return true
        }
        precondition(queued == count, "the queue holds all \(count) live slots, not \(queued)")
    }
    #else
    @usableFromInline
    func _checkInvariants() {}
    #endif
}
