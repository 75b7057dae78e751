/// The adaptive S3-FIFO policy (``EvictionPolicy/s3FIFO``) written the plain way:
/// arrays searched and shifted, O(n) per operation, for the model test to
/// compare the cache against after every operation.
///
/// Keys are `Int`s; `fingerprint` gives the 32-bit hash the cache would use.
/// `cost` holds each resident key's cost.
struct ReferenceAdaptiveFIFO {
    let maxTransfers = 16
    var countLimit: Int
    var costLimit: Int
    let fingerprint: (Int) -> UInt32
    var small: [Int] = []  // oldest first
    var main: [Int] = []  // oldest first
    var counter: [Int: Int] = [:]
    var cost: [Int: Int] = [:]
    var ghost: [(fingerprint: UInt32, alive: Bool)] = []  // oldest first
    var share = 10  // the small queue's share of the limits, in thousandths
    var peak = 0
    var hasEvicted = false
    var requests = 0, smallHits = 0, mainHits = 0
    var pending: (toMain: Bool, cost: Int)?
    var overwriting: Int?

    var count: Int { small.count + main.count }
    var resident: Set<Int> { Set(small + main) }
    /// The cache's total cost, without the old cost of a key being overwritten.
    var totalCost: Int { cost.filter { $0.key != overwriting }.values.reduce(0, +) }
    var capacity: Int { min(countLimit, peak) }
    var ghostLimit: Int { Self.share(900, of: capacity) }

    static func share(_ share: Int, of limit: Int) -> Int { limit / 1000 * share + limit % 1000 * share / 1000 }

    func smallIsOverBudget() -> Bool {
        let extra = pending.map { $0.toMain ? (0, 0) : (1, $0.cost) } ?? (0, 0)
        let smallCost = small.reduce(0) { $0 + cost[$1]! } + extra.1
        return (countLimit != .max && small.count + extra.0 > max(1, Self.share(share, of: countLimit)))
            || (costLimit != .max && smallCost > Self.share(share, of: costLimit))
    }

    func inGhost(_ key: Int) -> Bool {
        ghost.suffix(ghostLimit).contains { $0.fingerprint == fingerprint(key) && $0.alive }
    }

    mutating func countHit(_ key: Int) {
        counter[key] = min(counter[key]! + 1, 3)
        guard hasEvicted else { return }
        requests += 1
        if small.contains(key) { smallHits += 1 } else { mainHits += 1 }
    }

    /// A lookup: true on a hit.
    mutating func get(_ key: Int) -> Bool {
        guard counter[key] != nil else { return false }
        countHit(key)
        return true
    }

    /// The next victim after any second chances; nil when only `protected` is left.
    mutating func victim(protecting protected: Int?) -> Int? {
        var transfers = 0
        while true {
            let mainIsEmpty = main.allSatisfy { $0 == protected }
            if small.isEmpty && mainIsEmpty { return nil }
            if !small.isEmpty && (mainIsEmpty || (transfers < maxTransfers && smallIsOverBudget())) {
                let oldest = small[0]
                guard oldest == protected || counter[oldest]! >= 2 else { return oldest }
                small.removeFirst()
                counter[oldest] = 0
                main.append(oldest)
                transfers += 1
                continue
            }
            let oldest = main.removeFirst()
            if oldest != protected && counter[oldest]! == 0 {
                main.insert(oldest, at: 0)
                return oldest
            }
            if oldest != protected { counter[oldest]! -= 1 }
            main.append(oldest)
        }
    }

    /// Removes `key`: an eviction by a limit when `evicted`, else a removal or expiry.
    mutating func remove(_ key: Int, evicted: Bool) {
        if let index = small.firstIndex(of: key) {
            small.remove(at: index)
            if evicted {
                ghost.append((fingerprint(key), true))
                ghost.removeFirst(max(0, ghost.count - ghostLimit))
            }
        } else {
            main.removeAll { $0 == key }
        }
        if evicted { hasEvicted = true }
        counter[key] = nil
        cost[key] = nil
    }

    /// Evicts until `extra` more entries of `extraCost` fit; returns the evicted keys.
    mutating func makeRoom(count extra: Int, cost extraCost: Int, protecting protected: Int?) -> [Int] {
        var evicted: [Int] = []
        while count > countLimit - extra || totalCost > costLimit - extraCost {
            guard let victim = victim(protecting: protected) else { break }
            remove(victim, evicted: true)
            evicted.append(victim)
        }
        return evicted
    }

    /// New limits, then evictions down to them.
    mutating func setLimits(countLimit: Int, costLimit: Int) -> [Int] {
        (self.countLimit, self.costLimit) = (countLimit, costLimit)
        ghost.removeFirst(max(0, ghost.count - ghostLimit))
        return makeRoom(count: 0, cost: 0, protecting: nil)
    }

    /// Evicts in eviction order until at most `maxCount` entries and `maxCost` cost remain.
    mutating func trim(toCount maxCount: Int, toCost maxCost: Int) -> [Int] {
        var evicted: [Int] = []
        while count > maxCount || totalCost > maxCost, let victim = victim(protecting: nil) {
            remove(victim, evicted: true)
            evicted.append(victim)
        }
        return evicted
    }

    /// Forgets everything but the limits.
    mutating func removeAll() {
        self = ReferenceAdaptiveFIFO(countLimit: countLimit, costLimit: costLimit, fingerprint: fingerprint)
    }

    mutating func transferExcess() {
        var transfers = 0
        while !small.isEmpty && transfers < maxTransfers && smallIsOverBudget() {
            counter[small[0]] = 0
            main.append(small.removeFirst())
            transfers += 1
        }
    }

    mutating func adaptIfDue() {
        guard hasEvicted, requests >= min(4 * capacity, 100_000) else { return }
        let smallDensity = smallHits * max(main.count, 1)
        let mainDensity = mainHits * max(small.count, 1)
        (requests, smallHits, mainHits) = (0, 0, 0)
        guard max(smallDensity, mainDensity) > 0, smallDensity != mainDensity else { return }
        let step = 30 * abs(smallDensity - mainDensity) / max(smallDensity, mainDensity)
        share = min(300, max(10, share + (smallDensity > mainDensity ? step : -step)))
    }

    /// A store: inserts `key` or overwrites it (a hit). Returns the evicted keys.
    mutating func set(_ key: Int, cost newCost: Int = 0) -> [Int] {
        if counter[key] != nil {
            overwriting = key
            let evicted = makeRoom(count: 0, cost: newCost, protecting: key)
            overwriting = nil
            cost[key] = newCost
            countHit(key)
            transferExcess()
            return evicted
        }
        pending = (inGhost(key), newCost)
        let evicted = makeRoom(count: 1, cost: newCost, protecting: nil)
        let toMain = pending!.toMain
        pending = nil
        if toMain {
            for index in ghost.indices where ghost[index].fingerprint == fingerprint(key) { ghost[index].alive = false }
        }
        counter[key] = 0
        cost[key] = newCost
        if toMain { main.append(key) } else { small.append(key) }
        peak = max(peak, count)
        if hasEvicted { requests += 1 }
        transferExcess()
        adaptIfDue()
        return evicted
    }
}
