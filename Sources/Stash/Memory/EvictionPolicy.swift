/// The order in which a ``MemoryCache`` evicts entries when a limit is reached.
///
/// Chosen once, at initialisation. A struct with static members rather than an
/// enum, so that new policies can be added without breaking code that uses
/// these.
///
/// | Policy | Evicts first | Read cost |
/// |---|---|---|
/// | ``lru`` | the entry read or written longest ago | moves the entry to the front |
/// | ``fifo`` | the entry inserted longest ago | none |
/// | ``lfu`` | the entry read least often; among equals, the least recently used | moves the entry up one frequency |
/// | ``s3FIFO`` (default) | a new entry not read again soon; else the oldest entry not read since its last round | bumps a 2-bit counter |
///
/// Every policy is O(1) per operation (``s3FIFO``: amortised O(1) per eviction).
public struct EvictionPolicy: Hashable, Sendable, CustomStringConvertible {
    enum Kind: Hashable, Sendable {
        case lru, fifo, lfu, s3FIFO
    }

    let kind: Kind

    /// Least recently used: a read or a write makes an entry the last to go.
    public static let lru = EvictionPolicy(kind: .lru)

    /// First in, first out: entries go in insertion order; reads don't change it,
    /// and neither does overwriting an entry's value.
    public static let fifo = EvictionPolicy(kind: .fifo)

    /// Least frequently used, with frequency buckets (O(1)): each read or write
    /// counts one use; the entry with the fewest uses goes first, and among
    /// entries with equal counts, the least recently used.
    ///
    /// Counts never decay, so an entry that was popular long ago can outstay
    /// newer popular ones; prefer ``lru`` when popularity shifts.
    public static let lfu = EvictionPolicy(kind: .lfu)

    /// S3-FIFO with an adaptive small queue: new keys wait in a small FIFO
    /// queue and stay only if read again while there; keys read there move on
    /// to a main FIFO queue, where each read earns another round (up to three)
    /// before eviction; a ghost queue of recently evicted keys' hashes lets a
    /// key that comes back soon go to the main queue, if the main queue's victim
    /// has been idle longer than the key was away (LIRS's rule; else the key
    /// starts again in the small queue, as a new key). The small
    /// queue starts at one entry and moves per marginal hit, within 0–90 % of
    /// the cache: a key that comes back soon after leaving the small queue grows
    /// it, one that comes back soon after leaving the main queue shrinks it; a
    /// new cache moves up to three entries a step, settling to one as it evicts.
    /// While the small queue is under 10 %, a key read once there gets a second
    /// lap in it and moves on only if read again; past 10 %, one read is enough.
    /// The default.
    ///
    /// Resists scans and loops larger than the cache, where LRU and FIFO hit
    /// almost nothing (a loop a little longer than the cache keeps a fixed part
    /// of itself resident, as LIRS does), and stays within half a point of LRU
    /// on the recency-heavy traces it was measured on; a read only bumps
    /// a counter, so reads cost no more than FIFO's. The measured hit ratios on
    /// real traces, and which traces, are in the project's `docs/benchmarks.md`;
    /// choose ``lru`` when keys are almost always read again soon after their
    /// first use and never in loops.
    ///
    /// Eviction order: trims (``MemoryCache/trim(toCount:)``,
    /// ``MemoryCache/trim(toCost:)``, a lowered limit) take, one at a time, the
    /// entry the next eviction would take, so they give second chances too.
    /// Snapshots, ``MemoryCache/keys`` and the tie-break of
    /// ``MemoryCache/trimCostliest(toCost:)`` list the small queue oldest first,
    /// then the main queue oldest first.
    /// The ghost holds 0.9 × capacity 32-bit hashes, and a shadow of the main
    /// queue's last evictions 0.1 × capacity, no keys or values, and only of
    /// entries evicted by a limit: removals and expiry enter neither.
    /// Its small-queue budget counts entries against `countLimit` and cost
    /// against `costLimit`, whichever binds.
    public static let s3FIFO = EvictionPolicy(kind: .s3FIFO)

    /// The policy's name: "lru", "fifo", "lfu" or "s3fifo".
    public var description: String {
        switch kind {
        case .lru: "lru"
        case .fifo: "fifo"
        case .lfu: "lfu"
        case .s3FIFO: "s3fifo"
        }
    }

    /// A fresh, empty queue implementing this policy.
    func makeQueue() -> any EvictionQueue {
        switch kind {
        case .lru: RecencyQueue(promotesOnAccess: true)
        case .fifo: RecencyQueue(promotesOnAccess: false)
        case .lfu: FrequencyQueue()
        case .s3FIFO: AdaptiveFIFOQueue()
        }
    }
}

/// The eviction order of a memory cache's entries, as an internal, replaceable
/// strategy.
///
/// A queue sees entries only as slot numbers in the cache's entry arena
/// (`0..<capacity`), keeps whatever per-slot bookkeeping it needs in its own
/// storage, and answers which slot to evict next. Adding a policy (S3-FIFO,
/// W-TinyLFU, …) means adding a conforming class and a case in
/// ``EvictionPolicy``; ``MemoryCache``'s API does not change.
///
/// The cache tells the queue each entry's 32-bit key hash (so a policy can
/// remember evicted keys by fingerprint) and cost (so it can budget its own
/// segments in cost units), and whether a removal is an eviction by a limit or
/// an explicit removal or expiry.
///
/// Every method must be O(1), amortised O(1) for ``victim(skipping:)``, except
/// the `forEach` iteration. Not thread-safe: the cache calls it with its lock held.
@usableFromInline
protocol EvictionQueue: AnyObject {
    /// Makes room for slots `0..<capacity`. Called before a slot that large is used.
    func reserveCapacity(_ capacity: Int)
    /// The cache's limits are now these (`Int.max`: none). Called at creation and
    /// whenever a limit changes, before the cache trims to it.
    func setLimits(countLimit: Int, costLimit: Int)
    /// A new entry whose key hashes to `hash` is about to be inserted with `cost`;
    /// the cache will now make room for it (calling ``victim(skipping:)``) and
    /// then call ``insert(_:hash:cost:)``.
    func willInsert(hash: UInt32, cost: Int)
    /// A new entry now occupies `slot`.
    func insert(_ slot: Int32, hash: UInt32, cost: Int)
    /// The entry at `slot` was read.
    func access(_ slot: Int32)
    /// The entry at `slot` had its value replaced; its cost is now `cost`.
    func overwrite(_ slot: Int32, cost: Int)
    /// The entry at `slot` is gone: evicted to meet a limit when `isEviction`,
    /// otherwise removed, replaced or expired. `hash` is its key's hash.
    /// The slot may be reused by a later insert.
    func remove(_ slot: Int32, hash: UInt32, isEviction: Bool)
    /// Forgets every slot, and anything remembered about evicted ones.
    func removeAll()
    /// The slot to evict next other than `protected` (-1: protect nothing), or
    /// -1 when there is none. May reorder the queue's own bookkeeping (a policy
    /// that gives entries a second chance does so here), but keeps every slot.
    func victim(skipping protected: Int32) -> Int32
    /// Calls `body` with every slot, the next victim first. Stops when `body` returns false.
    func forEachInEvictionOrder(_ body: (Int32) -> Bool)
}

/// The defaults for policies that need neither hashes, costs nor limits.
extension EvictionQueue {
    func setLimits(countLimit: Int, costLimit: Int) {}
    func willInsert(hash: UInt32, cost: Int) {}
}
