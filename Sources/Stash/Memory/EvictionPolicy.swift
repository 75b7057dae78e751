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
///
/// Every policy is O(1) per operation.
public struct EvictionPolicy: Hashable, Sendable, CustomStringConvertible {
    enum Kind: Hashable, Sendable {
        case lru, fifo, lfu
    }

    let kind: Kind

    /// Least recently used: a read or a write makes an entry the last to go.
    /// The default.
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

    /// The policy's name: "lru", "fifo" or "lfu".
    public var description: String {
        switch kind {
        case .lru: "lru"
        case .fifo: "fifo"
        case .lfu: "lfu"
        }
    }

    /// A fresh, empty queue implementing this policy.
    func makeQueue() -> any EvictionQueue {
        switch kind {
        case .lru: RecencyQueue(promotesOnAccess: true)
        case .fifo: RecencyQueue(promotesOnAccess: false)
        case .lfu: FrequencyQueue()
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
/// Every method must be O(1), except the `forEach` iteration. Not thread-safe:
/// the cache calls it with its lock held.
@usableFromInline
protocol EvictionQueue: AnyObject {
    /// Makes room for slots `0..<capacity`. Called before a slot that large is used.
    func reserveCapacity(_ capacity: Int)
    /// A new entry now occupies `slot`.
    func insert(_ slot: Int32)
    /// The entry at `slot` was read, or its value was replaced.
    func access(_ slot: Int32)
    /// The entry at `slot` is gone. The slot may be reused by a later insert.
    func remove(_ slot: Int32)
    /// Forgets every slot.
    func removeAll()
    /// The slot to evict next, or -1 when the queue is empty.
    var victim: Int32 { get }
    /// The slot to evict next other than `protected`, or -1 when there is none.
    func victim(skipping protected: Int32) -> Int32
    /// Calls `body` with every slot, the next victim first. Stops when `body` returns false.
    func forEachInEvictionOrder(_ body: (Int32) -> Bool)
}
