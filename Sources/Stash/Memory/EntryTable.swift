/// The engine of ``MemoryCache``: a striped hash index over an arena of
/// entries, plus an ``EvictionQueue``. ``MemoryCacheCore`` calls every
/// mutating method with its (policy) lock held; the mutations take the stripe
/// locks themselves where readers could see them. Reads through
/// ``concurrentValue(forKey:hash:)`` take only the key's stripe lock.
///
/// Locking, in one place:
/// - The policy lock (the core's) serialises every writer: the arena, the
///   columns, the queue, the accounting and the limits change only under it.
/// - Each of the ``stripeCount`` stripes (see ``IndexStripe``) has its own
///   lock. A writer takes the lock of a key's stripe, after the policy lock,
///   around each change a reader of that key could observe: its bucket, its
///   entry's value and write time, its expiry. Moving shared buffers (the
///   arena growing, a column appearing) and changing the age limit take every
///   stripe lock. Readers take one stripe lock and never the policy lock, so
///   the order policy → stripes (ascending) cannot deadlock.
/// - The policy's per-read bookkeeping is an atomic counter bump (S3-FIFO);
///   policies that move list nodes on a read (LRU, LFU) read under the policy lock.
///
/// Layout, chosen for O(1) operations, no reference counting per link, and a
/// small footprint per entry:
/// - `entries` is an arena of ``MemoryEntry`` slots. Freed slots go on a free
///   list and are reused; the arena doubles when full and never shrinks
///   (``removeAll(reason:)`` hands the whole arena away).
/// - The index is split into ``stripeCount`` stripes by the hash's top bits;
///   each stripe's `buckets` is an open-addressing hash index with linear
///   probing, growing on its own. Each bucket is one `UInt64`: the key's 32-bit hash in the high half and
///   slot + 1 in the low half (0 means empty). The hash tag lets a probe skip
///   most non-matching entries without touching the arena, and lets the index
///   grow, and delete by backward shift, without hashing any key again.
///   Each stripe's index stays at most 3/4 full. A bucket position passed
///   between methods is `stripe << 32 | bucket`.
/// - `costs`, `expiries` and `graces` hold each entry's cost, time-to-live
///   deadline and fail-safe grace in columns allocated only when the first
///   entry has a cost other than 0, a time to live or a grace: a cache that
///   uses none pays nothing for them.
/// - `occupied` has one bit per bucket. A lookup reads its home bucket's bit
///   first: most misses end there, in a bitmap small enough to stay in the CPU
///   cache (64 KiB for 500,000 buckets), without touching the bucket array.
/// - The queue keeps its own per-slot links (see ``SlotLinks``).
///
/// Every method is O(1) unless its comment says otherwise.
@usableFromInline
final class EntryTable<Key: Hashable, Value> {
    @usableFromInline typealias Entry = MemoryEntry<Key, Value>

    // Why the memory engine marks stored properties `@exclusivity(unchecked)`,
    // written once here; every other use points to this comment.
    //
    // Every stored `var` below is marked `@exclusivity(unchecked)`: it is only
    // touched with the owning cache's lock held, one operation at a time, and
    // no method holds two overlapping accesses to one property. The runtime's
    // dynamic exclusivity checks on class properties are a large share of a
    // lookup's instructions here (docs/benchmarks.md), for no protection
    // the lock does not already give. The same holds for the core's two
    // properties read on every eviction and for the eviction queues' state.

    // MARK: Arena
    @exclusivity(unchecked) @usableFromInline var entries: UnsafeMutablePointer<Entry>
    @exclusivity(unchecked) @usableFromInline var entryCapacity: Int
    /// Slots `0..<handedOut` have been used; those not live are in `freeSlots`.
    @exclusivity(unchecked) @usableFromInline var handedOut: Int
    @exclusivity(unchecked) @usableFromInline var freeSlots: [Int32]

    // MARK: Index
    /// ``stripeCount`` ``IndexStripe``s, ``stripeStride`` bytes apart.
    @usableFromInline let stripeMemory: UnsafeMutableRawPointer

    /// Each slot's cost; 0 until a cost is stored.
    @exclusivity(unchecked) @usableFromInline var costs = SlotColumn<Int>(defaultValue: 0)
    /// Each slot's time-to-live deadline; `Int64.max` (never) until a TTL is stored.
    @exclusivity(unchecked) @usableFromInline var expiries = SlotColumn<Int64>(defaultValue: .max)
    /// How long past its expiry each slot is kept as a fail-safe for loads
    /// (``LoadOptions/staleIfError``), in nanoseconds; 0 until one is stored.
    @exclusivity(unchecked) @usableFromInline var graces = SlotColumn<Int64>(defaultValue: 0)

    // MARK: Policy
    @usableFromInline let queue: any EvictionQueue
    /// Whether a read may skip the policy lock: the policy's read bookkeeping
    /// is an atomic bump (S3-FIFO) or nothing (FIFO), on a platform with atomics.
    @usableFromInline let readsConcurrently: Bool
    /// The S3-FIFO queue's use counters, when it is the policy, for a read's bump.
    @usableFromInline let useCounters: UseCounters?

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
    @exclusivity(unchecked) @usableFromInline var evictions = EvictionCounts()

    @usableFromInline let clock: any CacheClock
    /// Whether values can be ``DiscardableContent``, decided once from `Value`'s static type.
    @usableFromInline let checksDiscardable: Bool

    init(policy: EvictionPolicy, countLimit: Int, costLimit: Int, ageLimit: Int64, clock: any CacheClock) {
        self.queue = policy.makeQueue()
        useCounters = (queue as? AdaptiveFIFOQueue)?.counters
        readsConcurrently = AtomicBytes.isAtomic && (policy == .s3FIFO || policy == .fifo)
        queue.setLimits(countLimit: countLimit, costLimit: costLimit)
        self.countLimit = countLimit
        self.costLimit = costLimit
        self.ageLimit = ageLimit
        self.clock = clock
        self.checksDiscardable = Value.self is any DiscardableContent.Type
        (entries, entryCapacity, handedOut, freeSlots) = (.allocate(capacity: 0), 0, 0, [])
        stripeMemory = Self.makeStripes()
    }

    /// A new, empty index of `bucketCount` buckets (a power of two) and its bitmap.
    static func emptyIndex(bucketCount: Int) -> (
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
        costs.removeAll()
        expiries.removeAll()
        graces.removeAll()
        DetachedEntries(entries: entries, stripes: takeStripeIndexes(reset: false), count: count).release()
        Self.destroyStripes(stripeMemory)
    }
}
