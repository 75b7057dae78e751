/// O(1) LFU with frequency buckets (Shah, Mitra and Matani, 2010).
///
/// Every distinct use count in the cache has a bucket holding the slots with
/// that count, most recently used at the head. Buckets form a list ordered by
/// count, lowest first. An access moves the slot from its bucket to the bucket
/// for count + 1, creating it next door if needed and dropping the old one if it
/// empties. The victim is the tail of the lowest bucket: the least frequently
/// used entry and, among those, the least recently used.
final class FrequencyQueue: EvictionQueue {

    // `@exclusivity(unchecked)`: lock-guarded state; the rationale is on EntryTable.
    private struct Bucket {
        var count: UInt32
        var slots = SlotList()
        var lower: Int32 = -1
        var higher: Int32 = -1
    }

    private let links = SlotLinks()
    /// For each slot, the index in `buckets` of the bucket it is in.
    @exclusivity(unchecked) private var bucketOfSlot: UnsafeMutablePointer<Int32> = .allocate(capacity: 0)
    @exclusivity(unchecked) private var slotCapacity = 0
    @exclusivity(unchecked) private var buckets: [Bucket] = []
    @exclusivity(unchecked) private var freeBuckets: [Int32] = []
    @exclusivity(unchecked) private var lowest: Int32 = -1

    deinit {
        bucketOfSlot.deallocate()
    }

    func reserveCapacity(_ capacity: Int) {
        guard capacity > slotCapacity else { return }
        links.reserveCapacity(capacity)
        bucketOfSlot = bucketOfSlot.movedToNewBuffer(count: slotCapacity, capacity: capacity, filling: -1)
        slotCapacity = capacity
    }

    func insert(_ slot: Int32, hash: UInt32, cost: Int) {
        let target: Int32
        if lowest >= 0, buckets[Int(lowest)].count == 1 {
            target = lowest
        } else {
            target = makeBucket(count: 1, lower: -1, higher: lowest)
            lowest = target
        }
        buckets[Int(target)].slots.pushHead(slot, links)
        bucketOfSlot[Int(slot)] = target
    }

    func access(_ slot: Int32) {
        let current = bucketOfSlot[Int(slot)]
        let count = buckets[Int(current)].count
        guard count < .max else {
            buckets[Int(current)].slots.moveToHead(slot, links)
            return
        }
        let higher = buckets[Int(current)].higher
        let target: Int32
        if higher >= 0, buckets[Int(higher)].count == count + 1 {
            target = higher
        } else {
            target = makeBucket(count: count + 1, lower: current, higher: higher)
        }
        buckets[Int(current)].slots.unlink(slot, links)
        buckets[Int(target)].slots.pushHead(slot, links)
        bucketOfSlot[Int(slot)] = target
        dropIfEmpty(current)
    }

    func overwrite(_ slot: Int32, cost: Int) {
        access(slot)
    }

    func remove(_ slot: Int32, hash: UInt32, isEviction: Bool) {
        let current = bucketOfSlot[Int(slot)]
        buckets[Int(current)].slots.unlink(slot, links)
        bucketOfSlot[Int(slot)] = -1
        dropIfEmpty(current)
    }

    func removeAll() {
        buckets.removeAll(keepingCapacity: true)
        freeBuckets.removeAll(keepingCapacity: true)
        lowest = -1
    }

    func victim(skipping protected: Int32) -> Int32 {
        var bucket = lowest
        while bucket >= 0 {
            let tail = buckets[Int(bucket)].slots.tail
            if tail != protected { return tail }
            let before = links.prev[Int(tail)]
            if before >= 0 { return before }
            bucket = buckets[Int(bucket)].higher
        }
        return -1
    }

    func forEachInEvictionOrder(_ body: (Int32) -> Bool) {
        var bucket = lowest
        while bucket >= 0 {
            let higher = buckets[Int(bucket)].higher
            if !buckets[Int(bucket)].slots.forEachFromTail(links, body) { return }
            bucket = higher
        }
    }

    /// Creates a bucket for `count` between `lower` and `higher` (either may be -1).
    private func makeBucket(count: UInt32, lower: Int32, higher: Int32) -> Int32 {
        let bucket = Bucket(count: count, lower: lower, higher: higher)
        let index: Int32
        if let reused = freeBuckets.popLast() {
            index = reused
            buckets[Int(index)] = bucket
        } else {
            index = Int32(buckets.count)
            buckets.append(bucket)
        }
        if lower >= 0 { buckets[Int(lower)].higher = index }
        if higher >= 0 { buckets[Int(higher)].lower = index }
        return index
    }

    private func dropIfEmpty(_ bucket: Int32) {
        guard buckets[Int(bucket)].slots.isEmpty else { return }
        let lower = buckets[Int(bucket)].lower
        let higher = buckets[Int(bucket)].higher
        if lower >= 0 { buckets[Int(lower)].higher = higher } else { lowest = higher }
        if higher >= 0 { buckets[Int(higher)].lower = lower }
        freeBuckets.append(bucket)
    }
}
