extension UnsafeMutablePointer {
    /// Moves the first `count` elements into a new buffer of `newCapacity`
    /// elements, initialises the rest to `filler` when one is given (and
    /// leaves them uninitialised otherwise), deallocates this buffer, and
    /// returns the new one.
    ///
    /// The memory engine's one grow-a-buffer routine: the entry arena, the
    /// ``SlotColumn``s and the eviction queues' per-slot arrays all grow
    /// through it. Not thread-safe: the caller owns the buffer.
    ///
    /// - Complexity: O(`newCapacity`).
    func movedToNewBuffer(count: Int, capacity newCapacity: Int, filling filler: Pointee? = nil) -> Self {
        let grown = Self.allocate(capacity: newCapacity)
        grown.moveInitialize(from: self, count: count)
        if let filler {
            (grown + count).initialize(repeating: filler, count: newCapacity - count)
        }
        deallocate()
        return grown
    }
}
