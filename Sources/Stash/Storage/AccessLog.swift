/// The last-access times of reads not yet written to the manifest, by stored key.
///
/// Thread-safe, behind a lock of its own, because reads record times from two
/// places: ``KVStorage``'s reads under the cache's lock, and the reads that
/// ``ManifestReaderPool`` serves without it. Writing the times is
/// ``KVStorage/flushAccessTimes()``'s job (KVStorage+AccessTimes.swift); this
/// type only holds them. Every method is O(1) but ``drain()`` and ``restore(_:)``
/// (O(p) for p times), and none blocks beyond the lock, held for one dictionary
/// operation. Lock order: the cache's lock, then this one (never the reverse).
final class AccessLog: Sendable {
    private let times = LockedValue<[String: Int64]>([:])
    /// Room reserved on first use, so that the table does not grow (and rehash)
    /// through every power of two before each flush: it reaches about this size
    /// every time.
    private let expectedCount: Int

    init(expectedCount: Int) {
        self.expectedCount = expectedCount
    }

    /// Notes that `key` was read at `time`; the number of times now pending.
    @discardableResult
    func record(_ key: String, at time: Int64) -> Int {
        times.withLock { times in
            if times.capacity == 0 { times.reserveCapacity(expectedCount) }
            times[key] = time
            return times.count
        }
    }

    /// Forgets `key`'s time: its row was removed or rewritten (a write records its
    /// own access time).
    func forget(_ key: String) {
        times.withLock { _ = $0.removeValue(forKey: key) }
    }

    /// Forgets every time.
    func removeAll() {
        times.withLock { $0.removeAll(keepingCapacity: true) }
    }

    /// Takes every pending time, leaving none.
    func drain() -> [String: Int64] {
        times.withLock { times in
            let taken = times
            times.removeAll(keepingCapacity: true)
            return taken
        }
    }

    /// Puts back times that a failed flush took with ``drain()``; a time recorded
    /// since wins when it is later.
    func restore(_ earlier: [String: Int64]) {
        times.withLock { times in
            times.merge(earlier) { recorded, earlier in Swift.max(recorded, earlier) }
        }
    }

    /// The number of pending times.
    var count: Int { times.withLock { $0.count } }
}
