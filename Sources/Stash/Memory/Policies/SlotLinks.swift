/// `prev` and `next` links for doubly linked lists threaded through arena slots.
///
/// Several lists can share one `SlotLinks` (the LFU queue keeps one list per
/// frequency), since each slot is in at most one list at a time. The links are
/// two dense `Int32` arrays rather than class instances, so moving an entry
/// costs no reference counting and touches at most a few cache lines.
/// -1 means "none".
final class SlotLinks {

    // `@exclusivity(unchecked)`: lock-guarded state; the rationale is on EntryTable.
    @exclusivity(unchecked) private(set) var prev: UnsafeMutablePointer<Int32>
    @exclusivity(unchecked) private(set) var next: UnsafeMutablePointer<Int32>
    @exclusivity(unchecked) private(set) var capacity: Int

    init() {
        capacity = 0
        prev = .allocate(capacity: 0)
        next = .allocate(capacity: 0)
    }

    deinit {
        prev.deallocate()
        next.deallocate()
    }

    func reserveCapacity(_ newCapacity: Int) {
        guard newCapacity > capacity else { return }
        prev = Self.grow(prev, from: capacity, to: newCapacity)
        next = Self.grow(next, from: capacity, to: newCapacity)
        capacity = newCapacity
    }

    private static func grow(
        _ old: UnsafeMutablePointer<Int32>, from oldCapacity: Int, to newCapacity: Int
    ) -> UnsafeMutablePointer<Int32> {
        old.movedToNewBuffer(count: oldCapacity, capacity: newCapacity, filling: -1)
    }
}

/// The two ends of one doubly linked list of slots. `head` is the newest end,
/// `tail` the end that is evicted first.
struct SlotList {
    var head: Int32 = -1
    var tail: Int32 = -1

    var isEmpty: Bool { head < 0 }

    mutating func pushHead(_ slot: Int32, _ links: SlotLinks) {
        links.prev[Int(slot)] = -1
        links.next[Int(slot)] = head
        if head >= 0 { links.prev[Int(head)] = slot } else { tail = slot }
        head = slot
    }

    mutating func unlink(_ slot: Int32, _ links: SlotLinks) {
        let before = links.prev[Int(slot)]
        let after = links.next[Int(slot)]
        if before >= 0 { links.next[Int(before)] = after } else { head = after }
        if after >= 0 { links.prev[Int(after)] = before } else { tail = before }
        links.prev[Int(slot)] = -1
        links.next[Int(slot)] = -1
    }

    /// Moves `slot`, already in this list, to the head.
    mutating func moveToHead(_ slot: Int32, _ links: SlotLinks) {
        guard head != slot else { return }
        unlink(slot, links)
        pushHead(slot, links)
    }

    /// Walks from the tail towards the head. Returns false if `body` stopped it.
    func forEachFromTail(_ links: SlotLinks, _ body: (Int32) -> Bool) -> Bool {
        var slot = tail
        while slot >= 0 {
            let before = links.prev[Int(slot)]
            if !body(slot) { return false }
            slot = before
        }
        return true
    }
}
