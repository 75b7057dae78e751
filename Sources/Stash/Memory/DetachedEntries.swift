/// Entries taken out of a ``EntryTable`` as a whole, in O(1) per index stripe,
/// so that they can be reported and released after the cache's locks are released.
/// Owns the old arena and the stripes' old indexes; its live slots are those
/// the indexes point at.
final class DetachedEntries<Key, Value>: @unchecked Sendable {
    // @unchecked Sendable: after detaching, nothing else references these buffers;
    // the object is handed from the thread that detached it to at most one other
    // thread (the background release queue), never used by two at once.
    private var entries: UnsafeMutablePointer<MemoryEntry<Key, Value>>
    private var stripes: [(buckets: UnsafeMutablePointer<UInt64>, count: Int)]
    /// How many entries were detached: the table's count at that moment, so
    /// that reading it under the lock is O(1).
    let count: Int

    init(
        entries: UnsafeMutablePointer<MemoryEntry<Key, Value>>,
        stripes: [(buckets: UnsafeMutablePointer<UInt64>, count: Int)], count: Int
    ) {
        self.entries = entries
        self.stripes = stripes
        self.count = count
    }

    /// Calls `body` with every detached entry.
    func forEach(_ body: (Key, Value) -> Void) {
        for (buckets, bucketCount) in stripes {
            for index in 0..<bucketCount where buckets[index] != 0 {
                let entry = entries + Int(Int32(truncatingIfNeeded: buckets[index]) &- 1)
                body(entry.pointee.key, entry.pointee.value)
            }
        }
    }

    /// Releases every entry and the buffers now. Safe to call more than once.
    func release() {
        for (buckets, bucketCount) in stripes {
            for index in 0..<bucketCount where buckets[index] != 0 {
                (entries + Int(Int32(truncatingIfNeeded: buckets[index]) &- 1)).deinitialize(count: 1)
            }
            buckets.deallocate()
        }
        stripes = []
        entries.deallocate()
        entries = .allocate(capacity: 0)
    }

    deinit {
        release()
        entries.deallocate()
    }
}
