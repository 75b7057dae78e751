/// S3-FIFO (Yang et al., SOSP '23) with a small queue sized by shadow hits and
/// LIRS's admission rule for keys coming back from the ghost: the policy behind
/// ``EvictionPolicy/s3FIFO``.
///
/// Three FIFOs: a small queue `S` that new keys enter, a main queue `M`, and
/// ``GhostFingerprints`` `G` remembering the keys recently evicted from `S`;
/// plus a short shadow `H` of the keys recently evicted from `M`, used only to
/// size `S`. Each entry carries a 2-bit use counter.
/// - A read or an overwrite sets the counter to min(counter + 1, 3). Nothing moves.
/// - A new key is headed for `M` if `G` remembers its fingerprint, otherwise `S`;
///   either way with counter 0. If it does enter `M` (see admission below), `G`
///   forgets it.
/// - To evict (``victim(skipping:)``): while `S` is over its budget (counting the
///   entry about to be inserted) or `M` is empty, take `S`'s oldest entry; read
///   since it arrived (counter > 0) it moves to `M` (counter 0) and the search goes
///   on, otherwise it is the victim, and its fingerprint goes to `G` once it is
///   evicted. While `S`'s share is under 10 % (S3-FIFO's own size: frequency is what
///   pays), an entry read only once gets a second lap in `S` instead (counter 0, to
///   `S`'s newest end, marked): a read in that lap promotes it, none evicts it. Once `S`
///   has grown past 10 % (recency pays), one read promotes. Else take `M`'s oldest: with counter > 0 it is decremented and moved
///   to `M`'s newest end, and the search goes on; otherwise it is the victim, and
///   its fingerprint goes to `H` once it is evicted.
/// - Admission from the ghost (LIRS's rule, Jiang and Zhang, SIGMETRICS '02): the
///   clock is `G`'s push count. Each entry is stamped when it goes to `M`'s newest
///   end; once its counter is 0 it has not been read for at least the pushes since.
///   When the entry about to be inserted is headed for `M` (a ghost hit) and the
///   search reaches `M`'s victim, the two are compared: if the victim has been idle
///   for fewer pushes than the newcomer's ghost age, the newcomer was last used
///   longer ago and does not displace it: it goes to `S` as a new key instead, and
///   the search goes on (like any new key, it then evicts from `S` if `S` is over
///   its budget, else from `M`). A loop longer than the cache then keeps a fixed
///   part of itself in `M` (as LIRS does) instead of cycling every key through it.
/// - Explicit removals, replacements and expiry unlink an entry without telling `G` or `H`.
/// - `S`'s budget is a share of the limits, between 0 and 90 % (it starts at
///   0), so that where recency is all there is, `S` can grow until the cache
///   behaves close to CLOCK: in entries of `countLimit` and in cost units of `costLimit`; `S` is
///   over budget when either is exceeded, except that it may always hold one
///   entry. While the cache is not full, entries past `S`'s budget move to `M`.
/// - Adaptation, by marginal hits: the window `w` is 0.1 × capacity (at least 1). A new key
///   that `G` remembers from fewer than `w` evictions ago would have been a hit
///   had `S` been `w` entries larger, so the share grows by one entry
///   (1 / capacity); a new key that `H` remembers (the last `w` evictions from
///   `M`) would have been a hit had `M` been `w` larger, so the share shrinks by
///   one entry. `H` forgets a key it matched. Capacity is `countLimit`, or the
///   most entries the cache has held if that is smaller (a cache limited by cost).
/// - Warm-up: a new (or emptied) cache starts with `S` at its floor and must find its size
///   within a short trace, so each step moves the share further at first: by
///   1 + 2 × C / (C + n) entries, C the capacity and n the evictions from `S` so far (three
///   entries at the start, two after C evictions, close to one after many).
/// - `G` remembers 0.9 × capacity fingerprints; `H` remembers `w`.
/// - Bounded work: one call moves at most ``maxTransfers`` entries from `S` to `M`
///   beyond what an eviction needs; the rest of a drop in `S`'s budget is
///   carried to later calls. `M`'s second chances are amortised O(1): each
///   counter decrement pays back an earlier increment.
///
/// Per-slot memory: the list links (8 bytes), one state byte (counter, queue, lap) and the stamp (4 bytes); plus the ghost,
/// about 4–8 bytes of ring and 8–16 bytes of table per 0.9 entries of capacity,
/// and the shadow, the same per 0.1 entries.
final class AdaptiveFIFOQueue: EvictionQueue {

    // `@exclusivity(unchecked)`: lock-guarded state; the rationale is on EntryTable.

    /// The most entries one call moves from the small queue to the main queue
    /// beyond what its eviction needs.
    static var maxTransfers: Int { 16 }
    /// The unit of ``smallShare``: a share of 1 is `shareScale`.
    static var shareScale: Int { 1 << 32 }
    /// The small queue's share of the limits, in units of 1 / ``shareScale``:
    /// its bounds, and its start (the lower bound: one entry, whatever its cost).
    static var minSmallShare: Int { 0 }
    static var maxSmallShare: Int { shareScale / 10 * 9 }
    /// The ghost's size, in thousandths of capacity.
    static var ghostShare: Int { 900 }
    /// The adaptation window, and the shadow's size, in thousandths of capacity.
    static var windowShare: Int { 100 }

    static var counterMask: UInt8 { UseCounters.counterMask }
    static var inMainBit: UInt8 { 0b100 }
    /// Set on an entry of the small queue that has had its second lap (see ``victim(skipping:)``).
    static var lappedBit: UInt8 { 0b1000 }
    /// How many times a marginal hit's step is multiplied on top of itself in a new cache, decaying
    /// as C / (C + n) with C the capacity and n the evictions from the small queue so far.
    static var warmUpGain: Int { 2 }

    private let links = SlotLinks()
    @exclusivity(unchecked) private var small = SlotList()
    @exclusivity(unchecked) private var main = SlotList()
    /// Per slot: the use counter (bits 0–1) and whether it is in `M` (bit 2),
    /// in atomic bytes that readers bump without the policy lock (see ``UseCounters``).
    let counters = UseCounters()
    private var state: AtomicBytes { counters.bytes }
    @exclusivity(unchecked) private var slotCapacity = 0
    /// Per slot cost, allocated when the first entry with a cost arrives.
    @exclusivity(unchecked) private var costs = SlotColumn<Int>(defaultValue: 0)
    /// Per slot, the ghost's ``GhostFingerprints/pushCount`` when the entry last went to the main
    /// queue's newest end (inserted, moved from the small queue, or given another round): the
    /// entry has not been read for at least the ghost pushes since, once its counter is 0.
    @exclusivity(unchecked) private var mainStamps: UnsafeMutablePointer<UInt32> = .allocate(capacity: 0)
    let ghost = GhostFingerprints()
    /// The fingerprints of the last evictions from the main queue, as many as the adaptation window.
    let mainShadow = GhostFingerprints()

    @exclusivity(unchecked) private(set) var smallCount = 0
    @exclusivity(unchecked) private(set) var mainCount = 0
    @exclusivity(unchecked) private var smallCost = 0

    @exclusivity(unchecked) private var countLimit = Int.max
    @exclusivity(unchecked) private var costLimit = Int.max
    /// The small queue's share of the limits, in units of 1 / ``shareScale``.
    @exclusivity(unchecked) private(set) var smallShare = AdaptiveFIFOQueue.minSmallShare
    @exclusivity(unchecked) private var smallCountBudget = Int.max
    @exclusivity(unchecked) private var smallCostBudget = Int.max
    /// The most entries held at once.
    @exclusivity(unchecked) private var peakCount = 0
    /// The evictions from the small queue since the cache was made or emptied: the warm-up's clock.
    /// Not the ghost's ``GhostFingerprints/pushCount``, a `UInt32` that wraps (and would restart the
    /// warm-up) after 2^32 evictions.
    @exclusivity(unchecked) private var smallEvictions = 0

    /// The entry ``willInsert(hash:cost:)`` announced: whether it goes to `M`, and its cost.
    @exclusivity(unchecked) private var pendingToMain = false
    @exclusivity(unchecked) private var pendingCount = 0
    @exclusivity(unchecked) private var pendingCost = 0
    /// The announced entry's cost, and how many ghost pushes ago it was evicted (its ghost age),
    /// for the admission check in ``victim(skipping:)``.
    @exclusivity(unchecked) private var pendingEntryCost = 0
    @exclusivity(unchecked) private var pendingGhostAge = 0

    deinit {
        counters.bytes.deallocate(count: slotCapacity)
        costs.removeAll()
        mainStamps.deallocate()
    }

    /// Capacity in entries: `countLimit`, or the most entries held if smaller.
    private var capacity: Int { Swift.min(countLimit, peakCount) }

    func reserveCapacity(_ capacity: Int) {
        guard capacity > slotCapacity else { return }
        links.reserveCapacity(capacity)
        counters.bytes.grow(from: slotCapacity, to: capacity)
        costs.grow(to: capacity)
        mainStamps = mainStamps.movedToNewBuffer(count: slotCapacity, capacity: capacity, filling: 0)
        slotCapacity = capacity
    }

    func setLimits(countLimit: Int, costLimit: Int) {
        self.countLimit = countLimit
        self.costLimit = costLimit
        updateBudgets()
    }

    /// `share` thousandths of `limit`, without overflow.
    private static func thousandths(_ share: Int, of limit: Int) -> Int {
        limit / 1000 * share + limit % 1000 * share / 1000
    }

    /// ⌊`limit` × `share` / ``shareScale``⌋ for `share` in 0...``shareScale``, without overflow.
    static func scaled(_ limit: Int, by share: Int) -> Int {
        let (high, low) = limit.multipliedFullWidth(by: share)
        return high << 32 | Int(low >> 32)
    }

    private func updateBudgets() {
        updateSmallBudgets()
        updateGhostLimits()
    }

    private func updateSmallBudgets() {
        smallCountBudget = countLimit == .max ? .max : Swift.max(1, Self.scaled(countLimit, by: smallShare))
        smallCostBudget = costLimit == .max ? .max : Self.scaled(costLimit, by: smallShare)
    }

    private func updateGhostLimits() {
        ghost.setLimit(Self.thousandths(Self.ghostShare, of: capacity))
        mainShadow.setLimit(Swift.max(1, Self.thousandths(Self.windowShare, of: capacity)))
    }

    /// Over either budget; one entry (counting the pending one) never is.
    private var smallIsOverBudget: Bool {
        let entries = smallCount + pendingCount
        return entries > smallCountBudget || (entries > 1 && smallCost > smallCostBudget - pendingCost)
    }

    // MARK: - Operations

    func willInsert(hash: UInt32, cost: Int) {
        let ghostAge = ghost.age(of: hash)
        pendingToMain = ghostAge >= 0
        pendingCount = pendingToMain ? 0 : 1
        pendingCost = pendingToMain ? 0 : cost
        (pendingEntryCost, pendingGhostAge) = (cost, ghostAge)
        // Marginal hits: a small queue `window` larger would have kept this
        // key; a main queue `window` larger would have kept this one.
        let window = mainShadow.limit
        var step = 0
        if pendingToMain && ghostAge < window { step += 1 }
        if mainShadow.contains(hash) {
            mainShadow.forget(hash)
            step -= 1
        }
        if step != 0 { adaptSmallShare(byEntries: step) }
    }

    func insert(_ slot: Int32, hash: UInt32, cost: Int) {
        let toMain = pendingToMain
        (pendingToMain, pendingCount, pendingCost) = (false, 0, 0)
        costs.set(cost, at: slot, arenaCapacity: slotCapacity)
        if toMain {
            ghost.forget(hash)
            state.store(Int(slot), Self.inMainBit)
            main.pushHead(slot, links)
            mainStamps[Int(slot)] = ghost.pushCount
            mainCount += 1
        } else {
            state.store(Int(slot), 0)
            small.pushHead(slot, links)
            smallCount += 1
            smallCost += cost
        }
        if smallCount + mainCount > peakCount {
            peakCount = smallCount + mainCount
            if peakCount <= countLimit { updateGhostLimits() }
        }
        transferExcess()
    }

    @inline(__always)
    func access(_ slot: Int32) {
        counters.bump(slot)
    }

    func overwrite(_ slot: Int32, cost: Int) {
        if state.load(Int(slot)) & Self.inMainBit == 0 {
            smallCost += cost - costs[slot]
        }
        costs.set(cost, at: slot, arenaCapacity: slotCapacity)
        access(slot)
        transferExcess()
    }

    func remove(_ slot: Int32, hash: UInt32, isEviction: Bool) {
        if state.load(Int(slot)) & Self.inMainBit != 0 {
            main.unlink(slot, links)
            mainCount -= 1
            if isEviction { mainShadow.push(hash) }
        } else {
            small.unlink(slot, links)
            smallCount -= 1
            smallCost -= costs[slot]
            if isEviction {
                ghost.push(hash)
                smallEvictions += 1
            }
        }
    }

    func removeAll() {
        (small, main) = (SlotList(), SlotList())
        (smallCount, mainCount, smallCost, peakCount, smallEvictions) = (0, 0, 0, 0, 0)
        (pendingToMain, pendingCount, pendingCost) = (false, 0, 0)
        smallShare = Self.minSmallShare
        costs.removeAll()
        ghost.removeAll()
        mainShadow.removeAll()
        updateBudgets()
    }

    func victim(skipping protected: Int32) -> Int32 {
        var transfers = 0
        while true {
            let mainIsEmpty = mainCount == (protected >= 0 && isInMain(protected) ? 1 : 0)
            if smallCount == 0 && mainIsEmpty { return -1 }
            if smallCount > 0 && (mainIsEmpty || (transfers < Self.maxTransfers && smallIsOverBudget)) {
                let oldest = small.tail
                let byte = state.load(Int(oldest))
                let counter = byte & Self.counterMask
                if oldest != protected && counter == 0 { return oldest }
                if oldest != protected && counter == 1 && byte & Self.lappedBit == 0 && smallShare * 10 < Self.shareScale {
                    // Read once, while the small queue is no larger than S3-FIFO's classic 10 %
                    // (frequency matters here): a second lap in the small queue, counter 0, instead
                    // of promotion; a read in that lap (or a second read) promotes it.
                    state.store(Int(oldest), Self.lappedBit)
                    small.moveToHead(oldest, links)
                    transfers += 1
                    continue
                }
                moveToMain(oldest)
                transfers += 1
                continue
            }
            let oldest = main.tail
            let counter = state.load(Int(oldest)) & Self.counterMask
            if oldest == protected || counter > 0 {
                if oldest != protected { state.store(Int(oldest), state.load(Int(oldest)) &- 1) }
                main.moveToHead(oldest, links)
                mainStamps[Int(oldest)] = ghost.pushCount
                continue
            }
            // In UInt32: the difference wraps, and may pass Int.max where Int has 32 bits.
            if pendingToMain && ghost.pushCount &- mainStamps[Int(oldest)] < UInt32(truncatingIfNeeded: pendingGhostAge) {
                // The key coming back from the ghost was last used longer ago than this entry:
                // it does not displace it (LIRS's rule). It enters the small queue as a new key.
                (pendingToMain, pendingCount, pendingCost) = (false, 1, pendingEntryCost)
                continue
            }
            return oldest
        }
    }

    private func isInMain(_ slot: Int32) -> Bool {
        state.load(Int(slot)) & Self.inMainBit != 0
    }

    /// The small queue's oldest to the main queue's newest end, counter 0.
    private func moveToMain(_ slot: Int32) {
        small.unlink(slot, links)
        smallCount -= 1
        smallCost -= costs[slot]
        state.store(Int(slot), Self.inMainBit)
        main.pushHead(slot, links)
        mainStamps[Int(slot)] = ghost.pushCount
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

    /// Moves the small queue's share by `entries` entries of capacity (one
    /// entry is 1 / capacity), within its bounds.
    private func adaptSmallShare(byEntries entries: Int) {
        // Rounded up, so that k steps make a budget of k entries of capacity.
        let capacity = Swift.max(capacity, 1)
        let step = (Self.shareScale + capacity - 1) / capacity
        let share = smallShare + entries * (step + Self.warmUpBonus(step: step, capacity: capacity, evictions: smallEvictions))
        smallShare = Swift.min(Self.maxSmallShare, Swift.max(Self.minSmallShare, share))
        updateSmallBudgets()
    }

    /// What a new cache adds to a marginal hit's `step`: ⌊step × ``warmUpGain`` × C / (C + n)⌋ for
    /// capacity C and n evictions from the small queue so far, so that the first adaptations
    /// move the share up to three times as far and the rule finds its size within a short trace.
    static func warmUpBonus(step: Int, capacity: Int, evictions: Int) -> Int {
        let product = (step * warmUpGain).multipliedFullWidth(by: capacity)
        let total = evictions > Int.max - capacity ? Int.max : capacity + evictions
        return total.dividingFullWidth(product).quotient
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
    func useCount(of slot: Int32) -> Int { Int(state.load(Int(slot)) & Self.counterMask) }

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
            && ghost.length <= ghost.limit && mainShadow.length <= mainShadow.limit && (Self.minSmallShare...Self.maxSmallShare).contains(smallShare)
    }
}
