extension EntryTable {
    /// Doubles the arena. Only called when no slot is free, so every slot in
    /// `0..<handedOut` is live and can be moved.
    @usableFromInline
    func growArena() {
        let newCapacity = Swift.max(8, entryCapacity * 2)
        // Readers dereference the arena, the expiry column and the queue's
        // counters: those move with every stripe locked. O(stripes), once per doubling.
        withAllStripesLocked {
            entries = entries.movedToNewBuffer(count: handedOut, capacity: newCapacity)
            entryCapacity = newCapacity
            expiries.grow(to: newCapacity)
            queue.reserveCapacity(newCapacity)
        }
        costs.grow(to: newCapacity)
        graces.grow(to: newCapacity)
    }

    @inlinable
    func allocateSlot() -> Int32 {
        if let slot = freeSlots.popLast() {
            return slot
        }
        if handedOut == entryCapacity {
            growArena()
        }
        handedOut += 1
        return Int32(handedOut - 1)
    }
}
