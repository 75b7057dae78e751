#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One of an ``EntryTable``'s index stripes: the part of the hash index that
/// holds the keys whose hash has these top bits, with the lock that readers
/// of those keys take.
///
/// Lives in raw memory owned by the table, one stripe per 128 bytes (two cache
/// lines on current x86 and ARM parts), so that two readers on different
/// stripes never write to the same cache line. The mutex is the first field,
/// so its address is the stripe's and never moves.
///
/// Who may touch what (the rationale is in the "Caching in Memory" article):
/// - `buckets`, `occupied`, `bucketMask` and `count` change only with both the
///   table's (policy) lock and this stripe's lock held, so a holder of either
///   may read them.
/// - `hits` and `misses` count the lock-free-of-policy reads; they change only
///   with this stripe's lock held.
@usableFromInline
struct IndexStripe {
    @usableFromInline var mutex: pthread_mutex_t
    @usableFromInline var buckets: UnsafeMutablePointer<UInt64>
    /// One bit per bucket, set while the bucket is in use.
    @usableFromInline var occupied: UnsafeMutablePointer<UInt64>
    @usableFromInline var bucketMask: Int
    /// Live entries in this stripe.
    @usableFromInline var count: Int
    @usableFromInline var hits: Int
    @usableFromInline var misses: Int
}

extension EntryTable {
    // MARK: - Stripes

    /// How many index stripes a table has: as many as the striped dictionary
    /// that the contention benchmark measures against. A power of two.
    @inlinable static var stripeCount: Int { 64 }
    /// The top bits of the 32-bit hash pick the stripe; the low bits pick the
    /// bucket within it, so the two are independent.
    @inlinable static var stripeShift: UInt32 { 26 }
    /// Bytes between two stripes.
    @inlinable static var stripeStride: Int { 128 }
    /// Buckets in a new stripe's index.
    static var initialStripeBuckets: Int { 8 }

    @inlinable
    static func stripeIndex(of hash: UInt32) -> Int {
        Int(truncatingIfNeeded: hash >> stripeShift)
    }

    @inlinable
    func stripe(_ index: Int) -> UnsafeMutablePointer<IndexStripe> {
        (stripeMemory + index &* Self.stripeStride).assumingMemoryBound(to: IndexStripe.self)
    }

    @inlinable
    func stripeMutex(_ index: Int) -> UnsafeMutablePointer<pthread_mutex_t> {
        (stripeMemory + index &* Self.stripeStride).assumingMemoryBound(to: pthread_mutex_t.self)
    }

    @inlinable
    func lockStripe(_ index: Int) {
        let result = pthread_mutex_lock(stripeMutex(index))
        assert(result == 0, "pthread_mutex_lock failed: \(result)")
    }

    @inlinable
    func unlockStripe(_ index: Int) {
        let result = pthread_mutex_unlock(stripeMutex(index))
        assert(result == 0, "pthread_mutex_unlock failed: \(result)")
    }

    /// Runs `body` with the lock of the stripe that `hash` falls in.
    @inlinable
    func withStripeLocked<Result>(hash: UInt32, _ body: () throws -> Result) rethrows -> Result {
        let index = Self.stripeIndex(of: hash)
        lockStripe(index)
        defer { unlockStripe(index) }
        return try body()
    }

    /// Runs `body` with every stripe's lock held, taken in ascending order:
    /// for changes readers must not see half-done (the arena or a column
    /// moving, the age limit changing, the whole index going). Rare: O(stripes).
    @usableFromInline
    func withAllStripesLocked<Result>(_ body: () throws -> Result) rethrows -> Result {
        for index in 0..<Self.stripeCount { lockStripe(index) }
        defer { for index in (0..<Self.stripeCount).reversed() { unlockStripe(index) } }
        return try body()
    }

    /// Raw memory for the stripes, each with an empty index and an initialised mutex.
    static func makeStripes() -> UnsafeMutableRawPointer {
        let memory = UnsafeMutableRawPointer.allocate(
            byteCount: stripeCount * stripeStride, alignment: stripeStride)
        for index in 0..<stripeCount {
            let (buckets, occupied, mask) = emptyIndex(bucketCount: initialStripeBuckets)
            let stripe = (memory + index * stripeStride).bindMemory(to: IndexStripe.self, capacity: 1)
            stripe.initialize(to: IndexStripe(
                mutex: pthread_mutex_t(), buckets: buckets, occupied: occupied, bucketMask: mask,
                count: 0, hits: 0, misses: 0))
            let result = withMutexAttributes(adaptive: true) { pthread_mutex_init(&stripe.pointee.mutex, $0) }
            precondition(result == 0, "pthread_mutex_init failed: \(result)")
        }
        return memory
    }

    /// Destroys the stripes' mutexes and frees their memory; the indexes must
    /// already be handed away (``takeStripeIndexes(reset:)`` with `reset` false).
    static func destroyStripes(_ memory: UnsafeMutableRawPointer) {
        for index in 0..<stripeCount {
            let stripe = (memory + index * stripeStride).assumingMemoryBound(to: IndexStripe.self)
            pthread_mutex_destroy(&stripe.pointee.mutex)
            stripe.deinitialize(count: 1)
        }
        memory.deallocate()
    }

    /// Hands every stripe's bucket array to the caller (with its bucket count),
    /// frees the bitmaps, and gives each stripe a new empty index when `reset`.
    /// The caller holds every stripe lock, or is the table's `deinit`.
    func takeStripeIndexes(reset: Bool = true) -> [(buckets: UnsafeMutablePointer<UInt64>, count: Int)] {
        var taken: [(buckets: UnsafeMutablePointer<UInt64>, count: Int)] = []
        taken.reserveCapacity(Self.stripeCount)
        for index in 0..<Self.stripeCount {
            let stripe = stripe(index)
            taken.append((stripe.pointee.buckets, stripe.pointee.bucketMask + 1))
            stripe.pointee.occupied.deallocate()
            if reset {
                (stripe.pointee.buckets, stripe.pointee.occupied, stripe.pointee.bucketMask) =
                    Self.emptyIndex(bucketCount: Self.initialStripeBuckets)
                stripe.pointee.count = 0
            }
        }
        return taken
    }

    /// The counts of reads made under the stripe locks only. Takes each stripe's lock in turn.
    func stripeCounters() -> (hits: Int, misses: Int) {
        var (hits, misses) = (0, 0)
        for index in 0..<Self.stripeCount {
            lockStripe(index)
            hits &+= stripe(index).pointee.hits
            misses &+= stripe(index).pointee.misses
            unlockStripe(index)
        }
        return (hits, misses)
    }

    // MARK: - The read path that takes no policy lock

    /// What ``concurrentValue(forKey:hash:)`` found.
    @usableFromInline
    enum ConcurrentRead {
        case hit(Value)
        case miss
        /// The entry is expired or discarded: the caller must take the policy
        /// lock, which removes it and counts the miss.
        case needsPolicyLock
    }

    /// Looks `key` up with only its stripe's lock held: the read path of a
    /// cache whose policy records a read with an atomic counter bump (S3-FIFO,
    /// FIFO). Counts the hit or miss in the stripe.
    ///
    /// The value is copied (retained) under the stripe lock, which every
    /// removal of this key also takes, so it stays alive after the lock is
    /// released even if another thread evicts the entry at once.
    @inlinable
    func concurrentValue(forKey key: Key, hash: UInt32) -> ConcurrentRead {
        let index = Self.stripeIndex(of: hash)
        lockStripe(index)
        let stripe = stripe(index)
        let slot = find(key, hash: hash, in: stripe).slot
        guard slot >= 0 else {
            stripe.pointee.misses &+= 1
            unlockStripe(index)
            return .miss
        }
        if (checksDiscardable || canExpire(slot)) && !isLive(slot, now: nil) {
            unlockStripe(index)
            return .needsPolicyLock
        }
        let value = entries[Int(slot)].value
        if let useCounters { useCounters.bump(slot) }
        stripe.pointee.hits &+= 1
        unlockStripe(index)
        return .hit(value)
    }
}
