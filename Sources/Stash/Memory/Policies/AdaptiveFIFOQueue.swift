/// S3-FIFO (Yang et al., SOSP '23) with an adaptive small queue: the policy
/// behind ``EvictionPolicy/s3FIFO``.
///
/// Three FIFOs: a small queue `S` that new keys enter, a main queue `M`, and
/// ``GhostFingerprints`` `G` remembering the keys recently evicted from `S`.
/// Each entry carries a 2-bit use counter.
/// - A read or an overwrite sets the counter to min(counter + 1, 3). Nothing moves.
/// - A new key enters `M` if `G` remembers its fingerprint (and `G` forgets it),
///   otherwise `S`; either way with counter 0.
/// - To evict (``victim(skipping:)``): while `S` is over its budget (counting the
///   entry about to be inserted) or `M` is empty, take `S`'s oldest entry; with
///   counter ≥ 2 it moves to `M` (counter 0) and the search goes on, otherwise it
///   is the victim, and its fingerprint goes to `G` once it is evicted. Else take
///   `M`'s oldest: with counter > 0 it is decremented and moved to `M`'s newest
///   end, and the search goes on; otherwise it is the victim.
/// - Explicit removals, replacements and expiry unlink an entry without telling `G`.
/// - `S`'s budget is a fraction of the limits, between 1 % and 30 %: in entries
///   of `countLimit` and in cost units of `costLimit`; `S` is over budget when
///   either is exceeded. While the cache is not full, entries past `S`'s budget
///   move to `M`.
/// - Adaptation: once the cache has evicted, every min(4 × capacity, 100,000)
///   requests (reads, inserts and overwrites) the fraction moves toward the
///   queue with more hits per entry over the period, by up to 3 % of capacity
///   in proportion to the difference in hit density (the hit-density rule of
///   Caffeine's climber). Capacity is `countLimit`, or the most entries the cache
///   has held if that is smaller (a cache limited by cost).
/// - `G` remembers 0.9 × capacity fingerprints.
/// - Bounded work: one call moves at most ``maxTransfers`` entries from `S` to `M`
///   beyond what an eviction needs; the rest of a large drop in `S`'s budget is
///   carried to later calls. `M`'s second chances are amortised O(1): each
///   counter decrement pays back an earlier increment.
///
/// Per-slot memory: the list links (8 bytes) and one state byte; plus the ghost,
/// about 4–8 bytes of ring and 8–16 bytes of table per 0.9 entries of capacity.
final class AdaptiveFIFOQueue: EvictionQueue {

    // `@exclusivity(unchecked)`: lock-guarded state; the rationale is on EntryTable.

    /// The most entries one call moves from the small queue to the main queue
    /// beyond what its eviction needs.
    static var maxTransfers: Int { 16 }
    /// The small queue's share of the limits, in thousandths: its bounds and its start.
    static var minSmallShare: Int { 10 }
    static var maxSmallShare: Int { 300 }
    /// The largest adaptation step, in thousandths of capacity.
    static var adaptationGain: Int { 30 }
    /// The ghost's size, in thousandths of capacity.
    static var ghostShare: Int { 900 }

    private static let counterMask: UInt8 = 0b11
    private static let inMainBit: UInt8 = 0b100

    private let links = SlotLinks()
    @exclusivity(unchecked) private var small = SlotList()
    @exclusivity(unchecked) private var main = SlotList()
    /// Per slot: the use counter (bits 0–1) and whether it is in `M` (bit 2).
    @exclusivity(unchecked) private var state: UnsafeMutablePointer<UInt8> = .allocate(capacity: 0)
    @exclusivity(unchecked) private var slotCapacity = 0
    /// Per slot cost, allocated when the first entry with a cost arrives.
    @exclusivity(unchecked) private var costs = SlotColumn<Int>(defaultValue: 0)
    let ghost = GhostFingerprints()

    @exclusivity(unchecked) private(set) var smallCount = 0
    @exclusivity(unchecked) private(set) var mainCount = 0
    @exclusivity(unchecked) private var smallCost = 0

    @exclusivity(unchecked) private var countLimit = Int.max
    @exclusivity(unchecked) private var costLimit = Int.max
    /// The small queue's share of the limits, in thousandths.
    @exclusivity(unchecked) private(set) var smallShare = AdaptiveFIFOQueue.minSmallShare
    @exclusivity(unchecked) private var smallCountBudget = Int.max
    @exclusivity(unchecked) private var smallCostBudget = Int.max
    /// The most entries held at once.
    @exclusivity(unchecked) private var peakCount = 0

    /// The entry ``willInsert(hash:cost:)`` announced: whether it goes to `M`, and its cost.
    @exclusivity(unchecked) private var pendingToMain = false
    @exclusivity(unchecked) private var pendingCount = 0
    @exclusivity(unchecked) private var pendingCost = 0

    // Adaptation, counted once the cache has evicted.
    @exclusivity(unchecked) private var hasEvicted = false
    @exclusivity(unchecked) private var periodRequests = 0
    @exclusivity(unchecked) private var periodSmallHits = 0
    @exclusivity(unchecked) private var periodMainHits = 0

    deinit {
        state.deallocate()
        costs.removeAll()
    }

    /// Capacity in entries: `countLimit`, or the most entries held if smaller.
    private var capacity: Int { Swift.min(countLimit, peakCount) }

    func reserveCapacity(_ capacity: Int) {
        guard capacity > slotCapacity else { return }
        links.reserveCapacity(capacity)
        state = state.movedToNewBuffer(count: slotCapacity, capacity: capacity, filling: 0)
        costs.grow(to: capacity)
        slotCapacity = capacity
    }

    func setLimits(countLimit: Int, costLimit: Int) {
        self.countLimit = countLimit
        self.costLimit = costLimit
        updateBudgets()
    }

    /// `share` thousandths of `limit`, without overflow.
    private static func share(_ share: Int, of limit: Int) -> Int {
        limit / 1000 * share + limit % 1000 * share / 1000
    }

    private func updateBudgets() {
        smallCountBudget = countLimit == .max ? .max : Swift.max(1, Self.share(smallShare, of: countLimit))
        smallCostBudget = costLimit == .max ? .max : Self.share(smallShare, of: costLimit)
        ghost.setLimit(Self.share(Self.ghostShare, of: capacity))
    }

    private var smallIsOverBudget: Bool {
        smallCount + pendingCount > smallCountBudget || smallCost > smallCostBudget - pendingCost
    }

    // MARK: - Operations

    func willInsert(hash: UInt32, cost: Int) {
        pendingToMain = ghost.contains(hash)
        pendingCount = pendingToMain ? 0 : 1
        pendingCost = pendingToMain ? 0 : cost
    }

    func insert(_ slot: Int32, hash: UInt32, cost: Int) {
        let toMain = pendingToMain
        (pendingToMain, pendingCount, pendingCost) = (false, 0, 0)
        costs.set(cost, at: slot, arenaCapacity: slotCapacity)
        if toMain {
            ghost.forget(hash)
            state[Int(slot)] = Self.inMainBit
            main.pushHead(slot, links)
            mainCount += 1
        } else {
            state[Int(slot)] = 0
            small.pushHead(slot, links)
            smallCount += 1
            smallCost += cost
        }
        if smallCount + mainCount > peakCount {
            peakCount = smallCount + mainCount
            if peakCount <= countLimit { ghost.setLimit(Self.share(Self.ghostShare, of: capacity)) }
        }
        if hasEvicted { periodRequests += 1 }
        transferExcess()
        adaptIfDue()
    }

    @inline(__always)
    func access(_ slot: Int32) {
        let old = state[Int(slot)]
        if old & Self.counterMask != Self.counterMask { state[Int(slot)] = old &+ 1 }
        if hasEvicted {
            periodRequests &+= 1
            if old & Self.inMainBit != 0 { periodMainHits &+= 1 } else { periodSmallHits &+= 1 }
        }
    }

    func overwrite(_ slot: Int32, cost: Int) {
        if state[Int(slot)] & Self.inMainBit == 0 {
            smallCost += cost - costs[slot]
        }
        costs.set(cost, at: slot, arenaCapacity: slotCapacity)
        access(slot)
        transferExcess()
    }

    func remove(_ slot: Int32, hash: UInt32, isEviction: Bool) {
        if state[Int(slot)] & Self.inMainBit != 0 {
            main.unlink(slot, links)
            mainCount -= 1
        } else {
            small.unlink(slot, links)
            smallCount -= 1
            smallCost -= costs[slot]
            if isEviction { ghost.push(hash) }
        }
        if isEviction { hasEvicted = true }
    }

    func removeAll() {
        (small, main) = (SlotList(), SlotList())
        (smallCount, mainCount, smallCost, peakCount) = (0, 0, 0, 0)
        (pendingToMain, pendingCount, pendingCost) = (false, 0, 0)
        (hasEvicted, periodRequests, periodSmallHits, periodMainHits) = (false, 0, 0, 0)
        smallShare = Self.minSmallShare
        costs.removeAll()
        ghost.removeAll()
        updateBudgets()
    }

    func victim(skipping protected: Int32) -> Int32 {
        var transfers = 0
        while true {
            let mainIsEmpty = mainCount == (protected >= 0 && isInMain(protected) ? 1 : 0)
            if smallCount == 0 && mainIsEmpty { return -1 }
            if smallCount > 0 && (mainIsEmpty || (transfers < Self.maxTransfers && smallIsOverBudget)) {
                let oldest = small.tail
                if oldest == protected || state[Int(oldest)] & Self.counterMask >= 2 {
                    moveToMain(oldest)
                    transfers += 1
                    continue
                }
                return oldest
            }
            let oldest = main.tail
            let counter = state[Int(oldest)] & Self.counterMask
            if oldest == protected || counter > 0 {
                if oldest != protected { state[Int(oldest)] &-= 1 }
                main.moveToHead(oldest, links)
                continue
            }
            return oldest
        }
    }

    private func isInMain(_ slot: Int32) -> Bool {
        state[Int(slot)] & Self.inMainBit != 0
    }

    /// The small queue's oldest to the main queue's newest end, counter 0.
    private func moveToMain(_ slot: Int32) {
        small.unlink(slot, links)
        smallCount -= 1
        smallCost -= costs[slot]
        state[Int(slot)] = Self.inMainBit
        main.pushHead(slot, links)
        mainCount += 1
    }

    /// Moves entries past the small queue's budget to the main queue, at most
    /// ``maxTransfers`` per call: the cache is not full, or the budget dropped.
    private func transferExcess() {
        var transfers = 0
        while smallCount > 0 && transfers < Self.maxTransfers && smallIsOverBudget {
            moveToMain(small.tail)
            transfers += 1
        }
    }

    /// Ends an adaptation period when one is due: moves the small queue's share
    /// toward the queue with more hits per entry.
    private func adaptIfDue() {
        guard hasEvicted, periodRequests >= Swift.min(4 * capacity, 100_000) else { return }
        defer { (periodRequests, periodSmallHits, periodMainHits) = (0, 0, 0) }
        // Hits per entry, cross-multiplied to stay in integers.
        let smallDensity = periodSmallHits * Swift.max(mainCount, 1)
        let mainDensity = periodMainHits * Swift.max(smallCount, 1)
        let denser = Swift.max(smallDensity, mainDensity)
        guard denser > 0, smallDensity != mainDensity else { return }
        let step = Self.adaptationGain * abs(smallDensity - mainDensity) / denser
        let share = smallShare + (smallDensity > mainDensity ? step : -step)
        smallShare = Swift.min(Self.maxSmallShare, Swift.max(Self.minSmallShare, share))
        updateBudgets()
    }

    /// The small queue oldest first, then the main queue oldest first: the order
    /// snapshots list. Evictions themselves follow ``victim(skipping:)``, which
    /// takes from the small queue only while it is over budget and gives
    /// counted entries another round.
    func forEachInEvictionOrder(_ body: (Int32) -> Bool) {
        guard small.forEachFromTail(links, body) else { return }
        _ = main.forEachFromTail(links, body)
    }

    // MARK: - Inspection, for tests

    /// The use counter of the entry at `slot`.
    func useCount(of slot: Int32) -> Int { Int(state[Int(slot)] & Self.counterMask) }

    /// Whether the entry at `slot` is in the main queue (else the small one).
    func isInMainQueue(_ slot: Int32) -> Bool { isInMain(slot) }

    /// Whether the bookkeeping agrees with itself: queue lengths and segment
    /// bits match the lists, the small queue's cost is the sum of its entries'
    /// costs, and the ghost is within its limit. O(n).
    func invariantsHold() -> Bool {
        var (smallSeen, smallCostSeen, mainSeen) = (0, 0, 0)
        var consistent = true
        _ = small.forEachFromTail(links) { slot in
            smallSeen += 1
            smallCostSeen += costs[slot]
            if isInMain(slot) { consistent = false }
            return true
        }
        _ = main.forEachFromTail(links) { slot in
            mainSeen += 1
            if !isInMain(slot) { consistent = false }
            return true
        }
        return consistent && smallSeen == smallCount && mainSeen == mainCount && smallCostSeen == smallCost
            && ghost.length <= ghost.limit && (Self.minSmallShare...Self.maxSmallShare).contains(smallShare)
    }
}
