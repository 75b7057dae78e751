/// The fingerprints (32-bit key hashes) of the last `limit` entries an
/// ``AdaptiveFIFOQueue`` evicted from one of its queues: a FIFO with no keys
/// and no values, which also tells how long ago a fingerprint arrived.
///
/// A ring buffer holds the fingerprints in eviction order; an open-addressing
/// table (linear probing, at most half full) maps a fingerprint to its ring
/// position, so membership is O(1). ``forget(_:)`` (a ghost hit) deletes the
/// table entry but leaves the ring slot, which still counts towards `limit`
/// until it falls off the head: the ghost is "fingerprints among the last
/// `limit` pushes that have not been hit since". A fingerprint pushed again
/// moves to its newest position.
///
/// Memory: 4 bytes per ring slot plus 4 bytes per table bucket; the ring is the
/// power of two at or above `limit` and the table twice that. Allocated on the
/// first push. Not thread-safe: the cache's lock guards it.
final class GhostFingerprints {

    // `@exclusivity(unchecked)`: lock-guarded state; the rationale is on EntryTable.
    @exclusivity(unchecked) private var ring: UnsafeMutablePointer<UInt32> = .allocate(capacity: 0)
    @exclusivity(unchecked) private var ringCapacity = 0
    /// Ring position of the oldest fingerprint.
    @exclusivity(unchecked) private var head = 0
    /// How many ring positions, from `head`, are in use (hit ones included).
    @exclusivity(unchecked) private(set) var length = 0
    /// Ring position + 1 per bucket; 0 is empty.
    @exclusivity(unchecked) private var table: UnsafeMutablePointer<UInt32> = .allocate(capacity: 0)
    @exclusivity(unchecked) private var tableMask = -1
    /// The most fingerprints remembered.
    @exclusivity(unchecked) private(set) var limit = 0
    /// Every push so far, wrapping: the clock that ``age(of:)`` counts in, which the policy also
    /// stamps entries with (ages are differences, so the wrap does not matter below 2^32).
    @exclusivity(unchecked) private(set) var pushCount: UInt32 = 0

    deinit {
        ring.deallocate()
        table.deallocate()
    }

    /// Bytes held by the ring and the table.
    var allocatedBytes: Int { (ringCapacity + tableMask + 1) * MemoryLayout<UInt32>.size }

    /// Remembers at most `newLimit` fingerprints from now on, dropping the oldest
    /// beyond it. O(dropped).
    func setLimit(_ newLimit: Int) {
        limit = Swift.max(0, Swift.min(newLimit, Int(Int32.max)))
        while length > limit { dropOldest() }
    }

    /// Whether `fingerprint` is remembered.
    func contains(_ fingerprint: UInt32) -> Bool {
        find(fingerprint) >= 0
    }

    /// How many fingerprints were pushed after `fingerprint` (0: it is the
    /// newest), or -1 when it is not remembered. O(1) expected.
    func age(of fingerprint: UInt32) -> Int {
        let bucket = find(fingerprint)
        guard bucket >= 0 else { return -1 }
        let position = Int(table[bucket]) - 1
        return (head &+ length &- 1 &- position) & (ringCapacity - 1)
    }

    /// Forgets `fingerprint`, if remembered.
    func forget(_ fingerprint: UInt32) {
        let bucket = find(fingerprint)
        if bucket >= 0 { clearBucket(bucket) }
    }

    /// Remembers `fingerprint` as the newest, dropping the oldest past `limit`.
    /// Amortised O(1): the ring doubles when `limit` outgrows it.
    func push(_ fingerprint: UInt32) {
        guard limit > 0 else { return }
        pushCount &+= 1
        while length >= limit { dropOldest() }
        if length == ringCapacity { grow(toHold: limit) }
        let position = (head + length) & (ringCapacity - 1)
        ring[position] = fingerprint
        length += 1
        let existing = find(fingerprint)
        if existing >= 0 {
            table[existing] = UInt32(position + 1)
        } else {
            insertIntoTable(position: position)
        }
    }

    /// Forgets everything and frees the buffers.
    func removeAll() {
        ring.deallocate()
        table.deallocate()
        ring = .allocate(capacity: 0)
        table = .allocate(capacity: 0)
        (ringCapacity, tableMask, head, length, pushCount) = (0, -1, 0, 0, 0)
    }

    // MARK: - Table

    /// The bucket holding `fingerprint`, or -1.
    private func find(_ fingerprint: UInt32) -> Int {
        guard tableMask >= 0 else { return -1 }
        var bucket = Int(fingerprint) & tableMask
        while true {
            let entry = table[bucket]
            if entry == 0 { return -1 }
            if ring[Int(entry) - 1] == fingerprint { return bucket }
            bucket = (bucket &+ 1) & tableMask
        }
    }

    private func insertIntoTable(position: Int) {
        var bucket = Int(ring[position]) & tableMask
        while table[bucket] != 0 {
            bucket = (bucket &+ 1) & tableMask
        }
        table[bucket] = UInt32(position + 1)
    }

    /// Empties `bucket`, shifting later entries of its probe run back (no tombstones).
    private func clearBucket(_ bucket: Int) {
        var hole = bucket
        var probe = bucket
        while true {
            probe = (probe &+ 1) & tableMask
            let entry = table[probe]
            if entry == 0 { break }
            let home = Int(ring[Int(entry) - 1]) & tableMask
            if (probe &- home) & tableMask >= (probe &- hole) & tableMask {
                table[hole] = entry
                hole = probe
            }
        }
        table[hole] = 0
    }

    // MARK: - Ring

    private func dropOldest() {
        let bucket = find(ring[head])
        if bucket >= 0, Int(table[bucket]) - 1 == head {
            clearBucket(bucket)
        }
        head = (head + 1) & (ringCapacity - 1)
        length -= 1
    }

    /// Re-lays the ring out, oldest first, in a power of two at or above
    /// `minimum`, and rebuilds the table twice as large. O(length).
    private func grow(toHold minimum: Int) {
        var capacity = Swift.max(16, ringCapacity)
        while capacity < minimum { capacity *= 2 }
        if capacity == ringCapacity { capacity *= 2 }
        let oldRing = ring, oldCapacity = ringCapacity, oldTable = table, oldBuckets = tableMask + 1
        ring = .allocate(capacity: capacity)
        table = .allocate(capacity: capacity * 2)
        table.initialize(repeating: 0, count: capacity * 2)
        ringCapacity = capacity
        tableMask = capacity * 2 - 1
        for offset in 0..<length {
            ring[offset] = oldRing[(head + offset) & (oldCapacity - 1)]
        }
        // Only the positions the old table pointed at are still remembered.
        for bucket in 0..<oldBuckets where oldTable[bucket] != 0 {
            let oldPosition = Int(oldTable[bucket]) - 1
            insertIntoTable(position: (oldPosition - head) & (oldCapacity - 1))
        }
        head = 0
        oldRing.deallocate()
        oldTable.deallocate()
    }
}
