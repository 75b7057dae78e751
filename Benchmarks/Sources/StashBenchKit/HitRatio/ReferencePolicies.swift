/// A textbook LRU cache of keys only, counted in entries: the benchmark's own
/// check that it reads the traces as the README's authors did. Not Stash.
///
/// A dictionary from key to slot, and an intrusive doubly linked list threaded
/// through parallel arrays (most recent at `head`).
public struct ReferenceLRU<Key: Hashable> {
    private let capacity: Int
    private var slots: [Key: Int] = [:]
    private var keys: [Key] = []
    private var previous: [Int] = []
    private var next: [Int] = []
    private var head = -1
    private var tail = -1

    public init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
        slots.reserveCapacity(capacity)
    }

    public var count: Int { slots.count }

    /// Requests `key`: true on a hit (and it becomes most recent); on a miss it
    /// is inserted, evicting the least recently used key when full.
    public mutating func access(_ key: Key) -> Bool {
        if let slot = slots[key] {
            moveToFront(slot)
            return true
        }
        let slot: Int
        if slots.count == capacity {
            slot = tail
            unlink(slot)
            slots[keys[slot]] = nil
            keys[slot] = key
        } else {
            slot = keys.count
            keys.append(key)
            previous.append(-1)
            next.append(-1)
        }
        slots[key] = slot
        pushFront(slot)
        return false
    }

    private mutating func unlink(_ slot: Int) {
        let p = previous[slot], n = next[slot]
        if p >= 0 { next[p] = n } else { head = n }
        if n >= 0 { previous[n] = p } else { tail = p }
    }

    private mutating func pushFront(_ slot: Int) {
        previous[slot] = -1
        next[slot] = head
        if head >= 0 { previous[head] = slot }
        head = slot
        if tail < 0 { tail = slot }
    }

    private mutating func moveToFront(_ slot: Int) {
        guard slot != head else { return }
        unlink(slot)
        pushFront(slot)
    }
}

/// A textbook FIFO cache of keys only: hits do not reorder; the oldest
/// insertion is evicted. The benchmark's own reference, not Stash.
public struct ReferenceFIFO<Key: Hashable> {
    private let capacity: Int
    private var present: Set<Key> = []
    private var ring: [Key] = []
    private var oldest = 0

    public init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
        present.reserveCapacity(capacity)
        ring.reserveCapacity(capacity)
    }

    public mutating func access(_ key: Key) -> Bool {
        if present.contains(key) { return true }
        if ring.count < capacity {
            ring.append(key)
        } else {
            present.remove(ring[oldest])
            ring[oldest] = key
            oldest = (oldest + 1) % capacity
        }
        present.insert(key)
        return false
    }
}
