extension EntryTable {
    @inlinable
    func isOccupied(_ bucket: Int) -> Bool {
        occupied[bucket &>> 6] & (1 &<< UInt64(bucket & 63)) != 0
    }

    @inlinable
    func setBucket(_ bucket: Int, to word: UInt64) {
        buckets[bucket] = word
        occupied[bucket &>> 6] |= 1 &<< UInt64(bucket & 63)
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

    /// Finds `key`. Returns its slot and bucket, or slot -1 and the empty bucket
    /// where it would go.
    @inlinable
    func find(_ key: Key, hash: UInt32) -> (slot: Int32, bucket: Int) {
        let mask = bucketMask
        var bucket = Int(hash) & mask
        guard isOccupied(bucket) else {
            return (-1, bucket)
        }
        while true {
            let word = buckets[bucket]
            if word == 0 {
                return (-1, bucket)
            }
            if UInt32(truncatingIfNeeded: word >> 32) == hash {
                let slot = Self.slot(of: word)
                if entries[Int(slot)].key == key {
                    return (slot, bucket)
                }
            }
            bucket = (bucket &+ 1) & mask
        }
    }

    /// The bucket that points at `slot`, which must be live.
    @inlinable
    func bucket(ofSlot slot: Int32) -> Int {
        let hash = Self.hash(entries[Int(slot)].key)
        let target = UInt64(hash) << 32 | UInt64(UInt32(slot &+ 1))
        let mask = bucketMask
        var bucket = Int(hash) & mask
        while buckets[bucket] != target {
            bucket = (bucket &+ 1) & mask
        }
        return bucket
    }

    /// Empties `bucket`, shifting later entries of its probe run back so that
    /// lookups never need tombstones.
    @inlinable
    func clearBucket(_ bucket: Int) {
        let mask = bucketMask
        var hole = bucket
        var probe = bucket
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
        occupied[hole &>> 6] &= ~(1 &<< UInt64(hole & 63))
    }

    /// Doubles the index. O(n), amortised O(1) per insert. No key is hashed again.
    @usableFromInline
    func growIndex() {
        let oldBuckets = buckets
        let oldCount = bucketMask + 1
        occupied.deallocate()
        (buckets, occupied, bucketMask) = Self.emptyIndex(bucketCount: oldCount * 2)
        for index in 0..<oldCount {
            let word = oldBuckets[index]
            guard word != 0 else { continue }
            var bucket = Int(UInt32(truncatingIfNeeded: word >> 32)) & bucketMask
            while buckets[bucket] != 0 {
                bucket = (bucket &+ 1) & bucketMask
            }
            setBucket(bucket, to: word)
        }
        oldBuckets.deallocate()
    }
}
