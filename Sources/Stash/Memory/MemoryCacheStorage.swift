/// One entry in the arena. Its cost and expiry time live in ``SlotColumn``s
/// beside the arena, which exist only once some entry needs them.
@usableFromInline
struct MemoryEntry<Key, Value> {
    @usableFromInline var key: Key
    @usableFromInline var value: Value
    /// When the value was last written, in clock nanoseconds. Ages count from here.
    @usableFromInline var writeTime: Int64

    @inlinable
    init(key: Key, value: Value, writeTime: Int64) {
        self.key = key
        self.value = value
        self.writeTime = writeTime
    }
}

/// The engine of ``MemoryCache``: a hash index over an arena of entries, plus
/// an ``EvictionQueue``. Not thread-safe: ``MemoryCacheCore`` calls it with its
/// lock held.
///
/// Layout, chosen for O(1) operations, no reference counting per link, and a
/// small footprint per entry:
/// - `entries` is an arena of ``MemoryEntry`` slots. Freed slots go on a free
///   list and are reused; the arena doubles when full and never shrinks
///   (``removeAll(reason:)`` hands the whole arena away).
/// - `buckets` is an open-addressing hash index with linear probing. Each
///   bucket is one `UInt64`: the key's 32-bit hash in the high half and
///   slot + 1 in the low half (0 means empty). The hash tag lets a probe skip
///   most non-matching entries without touching the arena, and lets the index
///   grow, and delete by backward shift, without hashing any key again.
///   The index stays at most 3/4 full.
/// - `costs` and `expiries` hold each entry's cost and time-to-live deadline
///   in columns allocated only when the first entry has a cost other than 0
///   or a time to live: a cache that uses neither pays nothing for them.
/// - `occupied` has one bit per bucket. A lookup reads its home bucket's bit
///   first: most misses end there, in a bitmap small enough to stay in the CPU
///   cache (64 KiB for 500,000 buckets), without touching the bucket array.
/// - The queue keeps its own per-slot links (see ``SlotLinks``).
///
/// Every method is O(1) unless its comment says otherwise.
@usableFromInline
final class MemoryCacheStorage<Key: Hashable, Value> {
    @usableFromInline typealias Entry = MemoryEntry<Key, Value>

    // Why the memory engine marks stored properties `@exclusivity(unchecked)`,
    // written once here; every other use points to this comment.
    //
    // Every stored `var` below is marked `@exclusivity(unchecked)`: it is only
    // touched with the owning cache's lock held, one operation at a time, and
    // no method holds two overlapping accesses to one property. The runtime's
    // dynamic exclusivity checks on class properties cost about half of a
    // lookup's instructions here (measured with callgrind), for no protection
    // the lock does not already give. The same holds for the core's two
    // properties read on every eviction and for the eviction queues' state.

    // MARK: Arena
    @exclusivity(unchecked) @usableFromInline var entries: UnsafeMutablePointer<Entry>
    @exclusivity(unchecked) @usableFromInline var entryCapacity: Int
    /// Slots `0..<handedOut` have been used; those not live are in `freeSlots`.
    @exclusivity(unchecked) @usableFromInline var handedOut: Int
    @exclusivity(unchecked) @usableFromInline var freeSlots: [Int32]

    // MARK: Index
    @exclusivity(unchecked) @usableFromInline var buckets: UnsafeMutablePointer<UInt64>
    @exclusivity(unchecked) @usableFromInline var bucketMask: Int
    /// One bit per bucket, set while the bucket is in use.
    @exclusivity(unchecked) @usableFromInline var occupied: UnsafeMutablePointer<UInt64>

    /// Each slot's cost; 0 until a cost is stored.
    @exclusivity(unchecked) @usableFromInline var costs = SlotColumn<Int>(defaultValue: 0)
    /// Each slot's time-to-live deadline; `Int64.max` (never) until a TTL is stored.
    @exclusivity(unchecked) @usableFromInline var expiries = SlotColumn<Int64>(defaultValue: .max)

    // MARK: Policy
    @usableFromInline let queue: any EvictionQueue

    // MARK: Accounting
    @exclusivity(unchecked) @usableFromInline var count: Int = 0
    @exclusivity(unchecked) @usableFromInline var totalCost: Int = 0
    /// How many entries have a time to live, so the background sweep can skip
    /// caches where nothing can expire.
    @exclusivity(unchecked) @usableFromInline var expiringCount: Int = 0

    // MARK: Limits (always >= 0; ageLimit is Int64.max when there is none)
    @exclusivity(unchecked) @usableFromInline var countLimit: Int
    @exclusivity(unchecked) @usableFromInline var costLimit: Int
    @exclusivity(unchecked) @usableFromInline var ageLimit: Int64

    // MARK: Statistics
    @exclusivity(unchecked) @usableFromInline var hits: Int = 0
    @exclusivity(unchecked) @usableFromInline var misses: Int = 0
    @exclusivity(unchecked) @usableFromInline var evictions: Int = 0

    @usableFromInline let clock: any CacheClock
    /// Whether values can be ``DiscardableContent``, decided once from `Value`'s static type.
    @usableFromInline let checksDiscardable: Bool

    static var initialBucketCount: Int { 16 }

    init(policy: EvictionPolicy, countLimit: Int, costLimit: Int, ageLimit: Int64, clock: any CacheClock) {
        self.queue = policy.makeQueue()
        queue.setLimits(countLimit: countLimit, costLimit: costLimit)
        self.countLimit = countLimit
        self.costLimit = costLimit
        self.ageLimit = ageLimit
        self.clock = clock
        self.checksDiscardable = Value.self is any DiscardableContent.Type
        (entries, entryCapacity, handedOut, freeSlots) = (.allocate(capacity: 0), 0, 0, [])
        (buckets, occupied, bucketMask) = Self.emptyIndex(bucketCount: Self.initialBucketCount)
    }

    /// A new, empty index of `bucketCount` buckets (a power of two) and its bitmap.
    private static func emptyIndex(bucketCount: Int) -> (
        buckets: UnsafeMutablePointer<UInt64>, occupied: UnsafeMutablePointer<UInt64>, mask: Int
    ) {
        let buckets = UnsafeMutablePointer<UInt64>.allocate(capacity: bucketCount)
        buckets.initialize(repeating: 0, count: bucketCount)
        let words = Swift.max(bucketCount / 64, 1)
        let occupied = UnsafeMutablePointer<UInt64>.allocate(capacity: words)
        occupied.initialize(repeating: 0, count: words)
        return (buckets, occupied, bucketCount - 1)
    }

    deinit {
        occupied.deallocate()
        costs.removeAll()
        expiries.removeAll()
        DetachedEntries(entries: entries, buckets: buckets, bucketCount: bucketMask + 1, count: count).release()
    }

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

    /// Doubles the arena. Only called when no slot is free, so every slot in
    /// `0..<handedOut` is live and can be moved.
    @usableFromInline
    func growArena() {
        let newCapacity = Swift.max(8, entryCapacity * 2)
        entries = entries.movedToNewBuffer(count: handedOut, capacity: newCapacity)
        entryCapacity = newCapacity
        costs.grow(to: newCapacity)
        expiries.grow(to: newCapacity)
        queue.reserveCapacity(newCapacity)
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

    // MARK: - Expiry

    @inlinable
    func isExpired(_ slot: Int32, now: Int64) -> Bool {
        now >= expiries[slot] || (ageLimit != .max && now &- entries[Int(slot)].writeTime >= ageLimit)
    }

    /// How long before `now` the entry at `slot` was last written.
    @inlinable
    func age(of slot: Int32, now: Int64) -> Int64 {
        now &- entries[Int(slot)].writeTime
    }

    /// Whether the entry may have expired, so the clock must be read.
    @inlinable
    func canExpire(_ slot: Int32) -> Bool {
        ageLimit != .max || expiries[slot] != .max
    }

    @usableFromInline
    func isDiscarded(_ value: Value) -> Bool {
        (value as? any DiscardableContent)?.isContentDiscarded ?? false
    }

    /// Why the entry at `slot` must go now, if it must: expired or discarded.
    @inlinable
    func staleReason(_ slot: Int32, now: Int64?) -> EvictionReason? {
        if canExpire(slot), isExpired(slot, now: now ?? clock.nanosecondsNow) {
            return .expired
        }
        if checksDiscardable, isDiscarded(entries[Int(slot)].value) {
            return .discarded
        }
        return nil
    }

    // MARK: - Operations

    /// Looks `key` up, counting a hit or a miss. An expired or discarded entry
    /// is removed and reported as a miss.
    @inlinable
    func value(forKey key: Key, hash: UInt32, evicted: inout EvictedEntries<Key, Value>) -> Value? {
        let (slot, bucket) = find(key, hash: hash)
        guard slot >= 0 else {
            misses &+= 1
            return nil
        }
        if let reason = staleReason(slot, now: nil) {
            remove(slot: slot, bucket: bucket, reason: reason, into: &evicted)
            misses &+= 1
            return nil
        }
        queue.access(slot)
        hits &+= 1
        return entries[Int(slot)].value
    }

    /// Whether `key` is present and fresh, without counting or touching recency.
    @inlinable
    func contains(_ key: Key, hash: UInt32) -> Bool {
        let slot = find(key, hash: hash).slot
        return slot >= 0 && staleReason(slot, now: nil) == nil
    }

    /// Stores `value`, first evicting in policy order until it fits within the limits.
    ///
    /// - Parameter ttl: Nanoseconds to live, or nil for no limit of its own.
    @inlinable
    func setValue(
        _ value: Value, forKey key: Key, hash: UInt32, cost: Int, ttl: Int64?, now: Int64,
        evicted: inout EvictedEntries<Key, Value>
    ) {
        var (slot, bucket) = find(key, hash: hash)
        if let rejection = rejection(cost: cost, ttl: ttl) {
            if slot >= 0 {
                remove(slot: slot, bucket: bucket, reason: .replaced, into: &evicted)
            }
            evicted.append(key: key, value: value, reason: rejection)
            return
        }
        let expiry = ttl.map { now.addingClamped($0) } ?? .max
        if slot >= 0 {
            // Take the old cost out first, so making room never overflows.
            totalCost -= costs[slot]
            makeRoom(count: 0, cost: cost, protecting: slot, into: &evicted)
            let entry = entries + Int(slot)
            let oldValue = entry.pointee.value
            entry.pointee.value = value
            entry.pointee.writeTime = now
            evicted.append(key: key, value: oldValue, reason: .replaced)
            totalCost += cost
            if expiries[slot] != .max { expiringCount -= 1 }
            if expiry != .max { expiringCount += 1 }
            costs.set(cost, at: slot, arenaCapacity: entryCapacity)
            expiries.set(expiry, at: slot, arenaCapacity: entryCapacity)
            queue.overwrite(slot, cost: cost)
        } else {
            let countBefore = count
            queue.willInsert(hash: hash, cost: cost)
            makeRoom(count: 1, cost: cost, protecting: -1, into: &evicted)
            let mustGrow = (count + 1) * 4 > (bucketMask + 1) * 3
            if mustGrow { growIndex() }
            if mustGrow || count != countBefore {
                // Growing moves every bucket, and evictions may have shifted some.
                bucket = find(key, hash: hash).bucket
            }
            slot = allocateSlot()
            (entries + Int(slot)).initialize(to: Entry(key: key, value: value, writeTime: now))
            costs.set(cost, at: slot, arenaCapacity: entryCapacity)
            expiries.set(expiry, at: slot, arenaCapacity: entryCapacity)
            setBucket(bucket, to: UInt64(hash) << 32 | UInt64(UInt32(slot &+ 1)))
            count += 1
            totalCost += cost
            if expiry != .max { expiringCount += 1 }
            queue.insert(slot, hash: hash, cost: cost)
        }
    }

    /// Evicts in policy order, never `protected`, until `count` more entries
    /// and `cost` more cost fit within the limits. `cost` must be at most
    /// `costLimit`, so the comparison cannot overflow.
    @inlinable
    func makeRoom(count extra: Int, cost: Int, protecting protected: Int32, into evicted: inout EvictedEntries<Key, Value>) {
        while count > countLimit - extra || totalCost > costLimit - cost {
            let victim = queue.victim(skipping: protected)
            guard victim >= 0 else { return }
            remove(slot: victim, reason: count > countLimit - extra ? .countLimit : .costLimit, into: &evicted)
        }
    }

    /// Why a value with this cost and time to live cannot be stored at all, if it cannot.
    @inlinable
    func rejection(cost: Int, ttl: Int64?) -> EvictionReason? {
        if countLimit < 1 { return .countLimit }
        if cost > costLimit { return .costLimit }
        if let ttl, ttl <= 0 { return .expired }
        return nil
    }

    /// Removes `key`'s entry, reporting it with `reason`. Returns its value.
    @inlinable
    func removeValue(
        forKey key: Key, hash: UInt32, reason: EvictionReason, evicted: inout EvictedEntries<Key, Value>
    ) -> Value? {
        let (slot, bucket) = find(key, hash: hash)
        guard slot >= 0 else { return nil }
        let stale = staleReason(slot, now: nil)
        let value = entries[Int(slot)].value
        remove(slot: slot, bucket: bucket, reason: stale ?? reason, into: &evicted)
        return stale == nil ? value : nil
    }

    /// Takes the entry at `slot` out of the index, the queue and the arena.
    @inlinable
    func remove(slot: Int32, bucket: Int, reason: EvictionReason, into evicted: inout EvictedEntries<Key, Value>) {
        let hash = UInt32(truncatingIfNeeded: buckets[bucket] >> 32)
        clearBucket(bucket)
        queue.remove(slot, hash: hash, isEviction: reason == .countLimit || reason == .costLimit)
        let entry = (entries + Int(slot)).move()
        freeSlots.append(slot)
        count -= 1
        totalCost -= costs[slot]
        if expiries[slot] != .max { expiringCount -= 1 }
        if reason.isEviction { evictions &+= 1 }
        evicted.append(key: entry.key, value: entry.value, reason: reason)
    }

    @inlinable
    func remove(slot: Int32, reason: EvictionReason, into evicted: inout EvictedEntries<Key, Value>) {
        remove(slot: slot, bucket: bucket(ofSlot: slot), reason: reason, into: &evicted)
    }

    /// Evicts in eviction order until count and cost are within their limits,
    /// after a limit was lowered.
    func trimToLimits(into evicted: inout EvictedEntries<Key, Value>) {
        queue.setLimits(countLimit: countLimit, costLimit: costLimit)
        makeRoom(count: 0, cost: 0, protecting: -1, into: &evicted)
    }

    /// Evicts in eviction order until at most `maxCount` entries remain. O(removed).
    func trim(toCount maxCount: Int, into evicted: inout EvictedEntries<Key, Value>) {
        while count > maxCount {
            let victim = queue.victim(skipping: -1)
            guard victim >= 0 else { return }
            remove(slot: victim, reason: .countLimit, into: &evicted)
        }
    }

    /// Evicts in eviction order until the total cost is at most `maxCost`. O(removed).
    func trim(toCost maxCost: Int, into evicted: inout EvictedEntries<Key, Value>) {
        while totalCost > maxCost {
            let victim = queue.victim(skipping: -1)
            guard victim >= 0 else { return }
            remove(slot: victim, reason: .costLimit, into: &evicted)
        }
    }

    /// Evicts the costliest entries first until the total cost is at most `maxCost`.
    /// Among equal costs, eviction order decides. O(n log n).
    func trimCostliest(toCost maxCost: Int, into evicted: inout EvictedEntries<Key, Value>) {
        guard totalCost > maxCost else { return }
        var order: [(cost: Int, rank: Int, slot: Int32)] = []
        order.reserveCapacity(count)
        queue.forEachInEvictionOrder { slot in
            order.append((costs[slot], order.count, slot))
            return true
        }
        order.sort { $0.cost != $1.cost ? $0.cost > $1.cost : $0.rank < $1.rank }
        for candidate in order where totalCost > maxCost {
            remove(slot: candidate.slot, reason: .costLimit, into: &evicted)
        }
    }

    /// Removes every entry in buckets `start..<start + bucketLimit` for which
    /// `reason` returns a reason. Returns the bucket to continue from, or nil
    /// when the scan reached the end of the index. O(bucketLimit).
    func sweep(
        from start: Int, bucketLimit: Int,
        into evicted: inout EvictedEntries<Key, Value>,
        reason: (Int32) -> EvictionReason?
    ) -> Int? {
        let end = Swift.min(start + bucketLimit, bucketMask + 1)
        var bucket = start
        while bucket < end {
            let word = buckets[bucket]
            if word != 0 {
                let slot = Self.slot(of: word)
                if let why = reason(slot) {
                    remove(slot: slot, bucket: bucket, reason: why, into: &evicted)
                    continue  // a later entry may have shifted into this bucket
                }
            }
            bucket += 1
        }
        return end > bucketMask ? nil : end
    }

    /// Hands every entry to a ``DetachedEntries`` and starts empty, in O(1):
    /// the caller releases the old entries after unlocking.
    func detachAll() -> DetachedEntries<Key, Value> {
        let detached = DetachedEntries(entries: entries, buckets: buckets, bucketCount: bucketMask + 1, count: count)
        occupied.deallocate()
        (entries, entryCapacity, handedOut, freeSlots) = (.allocate(capacity: 0), 0, 0, [])
        (buckets, occupied, bucketMask) = Self.emptyIndex(bucketCount: Self.initialBucketCount)
        costs.removeAll()
        expiries.removeAll()
        queue.removeAll()
        count = 0
        totalCost = 0
        expiringCount = 0
        return detached
    }

    /// The live, fresh entries in eviction order. O(n).
    func snapshot() -> [(key: Key, value: Value, cost: Int)] {
        var result: [(key: Key, value: Value, cost: Int)] = []
        result.reserveCapacity(count)
        let now = clock.nanosecondsNow
        queue.forEachInEvictionOrder { slot in
            if staleReason(slot, now: now) == nil {
                let entry = entries[Int(slot)]
                result.append((entry.key, entry.value, costs[slot]))
            }
            return true
        }
        return result
    }
}

/// Entries taken out of a ``MemoryCacheStorage`` as a whole, in O(1), so that
/// they can be reported and released after the cache's lock is released.
/// Owns the old arena and index; its live slots are those the index points at.
final class DetachedEntries<Key, Value>: @unchecked Sendable {
    // @unchecked Sendable: after detaching, nothing else references these buffers;
    // the object is handed from the thread that detached it to at most one other
    // thread (the background release queue), never used by two at once.
    private var entries: UnsafeMutablePointer<MemoryEntry<Key, Value>>
    private var buckets: UnsafeMutablePointer<UInt64>
    private var bucketCount: Int
    /// How many entries were detached: the table's count at that moment, so
    /// that reading it under the lock is O(1).
    let count: Int

    init(
        entries: UnsafeMutablePointer<MemoryEntry<Key, Value>>, buckets: UnsafeMutablePointer<UInt64>,
        bucketCount: Int, count: Int
    ) {
        self.entries = entries
        self.buckets = buckets
        self.bucketCount = bucketCount
        self.count = count
    }

    /// Calls `body` with every detached entry.
    func forEach(_ body: (Key, Value) -> Void) {
        for index in 0..<bucketCount where buckets[index] != 0 {
            let entry = entries + Int(Int32(truncatingIfNeeded: buckets[index]) &- 1)
            body(entry.pointee.key, entry.pointee.value)
        }
    }

    /// Releases every entry and the buffers now. Safe to call more than once.
    func release() {
        for index in 0..<bucketCount where buckets[index] != 0 {
            (entries + Int(Int32(truncatingIfNeeded: buckets[index]) &- 1)).deinitialize(count: 1)
        }
        entries.deallocate()
        buckets.deallocate()
        entries = .allocate(capacity: 0)
        buckets = .allocate(capacity: 0)
        bucketCount = 0
    }

    deinit {
        release()
        entries.deallocate()
        buckets.deallocate()
    }
}
