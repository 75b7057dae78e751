extension EntryTable {
    // MARK: - Bucket positions
    //
    // A position is `stripe << 32 | bucket`: which stripe's index, and which
    // bucket in it. Lookups return one; removals and inserts take one back.

    @inlinable
    static func position(stripe: Int, bucket: Int) -> Int {
        stripe &<< 32 | bucket
    }

    @inlinable
    static func stripeIndex(ofPosition position: Int) -> Int {
        position &>> 32
    }

    @inlinable
    static func bucket(ofPosition position: Int) -> Int {
        position & 0xFFFF_FFFF
    }

    @inlinable
    static func isOccupied(_ bucket: Int, in stripe: UnsafeMutablePointer<IndexStripe>) -> Bool {
        stripe.pointee.occupied[bucket &>> 6] & (1 &<< UInt64(bucket & 63)) != 0
    }

    /// The bucket word at `position`.
    @inlinable
    func word(at position: Int) -> UInt64 {
        stripe(Self.stripeIndex(ofPosition: position)).pointee.buckets[Self.bucket(ofPosition: position)]
    }

    /// Fills the bucket at `position`. The caller holds the policy lock and the stripe's lock.
    @inlinable
    func setBucket(_ position: Int, to word: UInt64) {
        let stripe = stripe(Self.stripeIndex(ofPosition: position))
        let bucket = Self.bucket(ofPosition: position)
        stripe.pointee.buckets[bucket] = word
        stripe.pointee.occupied[bucket &>> 6] |= 1 &<< UInt64(bucket & 63)
        stripe.pointee.count &+= 1
    }

    // MARK: - Hashing and lookup

    /// The 32 bits of the key's hash that the index stores.
    @inlinable
    static func hash(_ key: Key) -> UInt32 {
        UInt32(truncatingIfNeeded: key.hashValue)
    }

    @inlinable
    static func slot(of word: UInt64) -> Int32 {
        Int32(truncatingIfNeeded: word) &- 1
    }

    /// Finds `key`. Returns its slot and position, or slot -1 and the empty
    /// position where it would go. The caller holds the policy lock or the
    /// key's stripe lock.
    @inlinable
    func find(_ key: Key, hash: UInt32) -> (slot: Int32, bucket: Int) {
        find(key, hash: hash, in: stripe(Self.stripeIndex(of: hash)))
    }

    @inlinable
    func find(_ key: Key, hash: UInt32, in stripe: UnsafeMutablePointer<IndexStripe>) -> (slot: Int32, bucket: Int) {
        let high = Self.stripeIndex(of: hash) &<< 32
        let mask = stripe.pointee.bucketMask
        var bucket = Int(hash) & mask
        guard Self.isOccupied(bucket, in: stripe) else {
            return (-1, high | bucket)
        }
        let buckets = stripe.pointee.buckets
        while true {
            let word = buckets[bucket]
            if word == 0 {
                return (-1, high | bucket)
            }
            if UInt32(truncatingIfNeeded: word >> 32) == hash {
                let slot = Self.slot(of: word)
                if entries[Int(slot)].key == key {
                    return (slot, high | bucket)
                }
            }
            bucket = (bucket &+ 1) & mask
        }
    }

    /// The position that points at `slot`, which must be live.
    @inlinable
    func bucket(ofSlot slot: Int32) -> Int {
        let hash = Self.hash(entries[Int(slot)].key)
        let target = UInt64(hash) << 32 | UInt64(UInt32(slot &+ 1))
        let index = Self.stripeIndex(of: hash)
        let stripe = stripe(index)
        let mask = stripe.pointee.bucketMask
        var bucket = Int(hash) & mask
        while stripe.pointee.buckets[bucket] != target {
            bucket = (bucket &+ 1) & mask
        }
        return Self.position(stripe: index, bucket: bucket)
    }

    /// Empties the bucket at `position`, shifting later entries of its probe
    /// run back so that lookups never need tombstones. The caller holds the
    /// policy lock and the stripe's lock.
    @inlinable
    func clearBucket(_ position: Int) {
        let stripe = stripe(Self.stripeIndex(ofPosition: position))
        let buckets = stripe.pointee.buckets
        let mask = stripe.pointee.bucketMask
        var hole = Self.bucket(ofPosition: position)
        var probe = hole
        while true {
            probe = (probe &+ 1) & mask
            let word = buckets[probe]
            if word == 0 { break }
            let home = Int(UInt32(truncatingIfNeeded: word >> 32)) & mask
            // The entry at `probe` may move into the hole if the hole lies on its
            // probe path, i.e. between its home bucket and `probe` (cyclically).
            if (probe &- home) & mask >= (probe &- hole) & mask {
                buckets[hole] = word
                hole = probe
            }
        }
        buckets[hole] = 0
        stripe.pointee.occupied[hole &>> 6] &= ~(1 &<< UInt64(hole & 63))
        stripe.pointee.count &-= 1
    }

    /// Whether the stripe that `hash` falls in must grow before one more entry.
    @inlinable
    func stripeMustGrow(hash: UInt32) -> Bool {
        let stripe = stripe(Self.stripeIndex(of: hash))
        return (stripe.pointee.count + 1) * 4 > (stripe.pointee.bucketMask + 1) * 3
    }

    /// Doubles the index of the stripe that `hash` falls in. O(stripe's
    /// entries), amortised O(1) per insert. No key is hashed again. The caller
    /// holds the policy lock and the stripe's lock.
    @usableFromInline
    func growIndex(hash: UInt32) {
        let stripe = stripe(Self.stripeIndex(of: hash))
        let oldBuckets = stripe.pointee.buckets
        let oldCount = stripe.pointee.bucketMask + 1
        stripe.pointee.occupied.deallocate()
        let (buckets, occupied, mask) = Self.emptyIndex(bucketCount: oldCount * 2)
        for index in 0..<oldCount {
            let word = oldBuckets[index]
            guard word != 0 else { continue }
            var bucket = Int(UInt32(truncatingIfNeeded: word >> 32)) & mask
            while buckets[bucket] != 0 {
                bucket = (bucket &+ 1) & mask
            }
            buckets[bucket] = word
            occupied[bucket &>> 6] |= 1 &<< UInt64(bucket & 63)
        }
        (stripe.pointee.buckets, stripe.pointee.occupied, stripe.pointee.bucketMask) = (buckets, occupied, mask)
        oldBuckets.deallocate()
    }
}
