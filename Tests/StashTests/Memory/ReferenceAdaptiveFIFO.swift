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
    var ghost: [(fingerprint: UInt32, alive: Bool)] = []  // evicted from the small queue, oldest first
    var shadow: [(fingerprint: UInt32, alive: Bool)] = []  // evicted from the main queue, oldest first
    var share = 0  // the small queue's share of the limits, in units of 2^-32
    let maxShare = (1 << 32) / 10 * 9
    /// Evictions from the small queue so far (the ghost's clock), and, per key in the main queue,
    /// that count when it last went to the main queue's newest end.
    var ghostPushes = 0
    var stamp: [Int: Int] = [:]
    /// Evictions from the small queue so far, ghost or not (the warm-up's clock).
    var smallEvictions = 0
    /// The keys of the small queue on their second lap.
    var lapped: Set<Int> = []
    var peak = 0
    var pending: (toMain: Bool, cost: Int, ghostAge: Int)?
    var overwriting: Int?

    var count: Int { small.count + main.count }
    var resident: Set<Int> { Set(small + main) }
    /// The cache's total cost, without the old cost of a key being overwritten.
    var totalCost: Int { cost.filter { $0.key != overwriting }.values.reduce(0, +) }
    var capacity: Int { min(countLimit, peak) }
    var ghostLimit: Int { Self.thousandths(900, of: capacity) }
    /// The adaptation window, and the shadow's size.
    var window: Int { max(1, Self.thousandths(100, of: capacity)) }

    static func thousandths(_ share: Int, of limit: Int) -> Int { limit / 1000 * share + limit % 1000 * share / 1000 }

    func smallIsOverBudget() -> Bool {
        let extra = pending.map { $0.toMain ? (0, 0) : (1, $0.cost) } ?? (0, 0)
        let smallCost = small.reduce(0) { $0 + cost[$1]! } + extra.1
        let entries = small.count + extra.0
        return (countLimit != .max && entries > max(1, (countLimit * share) >> 32))
            || (costLimit != .max && entries > 1 && smallCost > (costLimit * share) >> 32)
    }

    /// Evictions from the small queue since `key`'s, or nil when the ghost does not remember it.
    func ghostAge(_ key: Int) -> Int? {
        let remembered = ghost.suffix(ghostLimit)
        return remembered.lastIndex { $0.fingerprint == fingerprint(key) && $0.alive }.map { remembered.endIndex - 1 - $0 }
    }

    func inShadow(_ key: Int) -> Bool {
        shadow.suffix(window).contains { $0.fingerprint == fingerprint(key) && $0.alive }
    }

    mutating func countHit(_ key: Int) {
        counter[key] = min(counter[key]! + 1, 3)
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
                guard oldest == protected || counter[oldest]! >= 1 else { return oldest }
                small.removeFirst()
                // Read once while the small queue's share is under 10 %: a second lap, not promotion.
                if oldest != protected && counter[oldest]! == 1 && !lapped.contains(oldest) && share * 10 < 1 << 32 {
                    counter[oldest] = 0
                    lapped.insert(oldest)
                    small.append(oldest)
                    transfers += 1
                    continue
                }
                lapped.remove(oldest)
                counter[oldest] = 0
                main.append(oldest)
                stamp[oldest] = ghostPushes
                transfers += 1
                continue
            }
            let oldest = main.removeFirst()
            if oldest != protected && counter[oldest]! == 0 {
                main.insert(oldest, at: 0)
                // A key back from the ghost displaces it only if it was used more recently.
                if let entering = pending, entering.toMain, ghostPushes - stamp[oldest]! < entering.ghostAge {
                    pending = (false, entering.cost, entering.ghostAge)
                    continue
                }
                return oldest
            }
            if oldest != protected { counter[oldest]! -= 1 }
            main.append(oldest)
            stamp[oldest] = ghostPushes
        }
    }

    /// Removes `key`: an eviction by a limit when `evicted`, else a removal or expiry.
    mutating func remove(_ key: Int, evicted: Bool) {
        if let index = small.firstIndex(of: key) {
            small.remove(at: index)
            if evicted { smallEvictions += 1 }
            if evicted && ghostLimit > 0 {
                ghost.append((fingerprint(key), true))
                ghostPushes += 1
                ghost.removeFirst(max(0, ghost.count - ghostLimit))
            }
        } else {
            main.removeAll { $0 == key }
            if evicted {
                shadow.append((fingerprint(key), true))
                shadow.removeFirst(max(0, shadow.count - window))
            }
        }
        counter[key] = nil
        cost[key] = nil
        stamp[key] = nil
        lapped.remove(key)
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
        shadow.removeFirst(max(0, shadow.count - window))
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
            lapped.remove(small[0])
            counter[small[0]] = 0
            stamp[small[0]] = ghostPushes
            main.append(small.removeFirst())
            transfers += 1
        }
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
        // Marginal hits move the small queue's share by one entry of capacity.
        let age = ghostAge(key)
        var entries = 0
        if let age, age < window { entries += 1 }
        if inShadow(key) {
            for index in shadow.indices where shadow[index].fingerprint == fingerprint(key) { shadow[index].alive = false }
            entries -= 1
        }
        let capacity = max(capacity, 1)
        let step = ((1 << 32) + capacity - 1) / capacity
        // The warm-up: up to three times the step while the cache is new (2 × C / (C + n) more).
        let bonus = step * 2 * capacity / (capacity + smallEvictions)
        share = min(maxShare, max(0, share + entries * (step + bonus)))
        pending = (age != nil, newCost, age ?? -1)
        let evicted = makeRoom(count: 1, cost: newCost, protecting: nil)
        let toMain = pending!.toMain
        pending = nil
        if toMain {
            for index in ghost.indices where ghost[index].fingerprint == fingerprint(key) { ghost[index].alive = false }
        }
        counter[key] = 0
        cost[key] = newCost
        if toMain {
            main.append(key)
            stamp[key] = ghostPushes
        } else {
            small.append(key)
        }
        peak = max(peak, count)
        transferExcess()
        return evicted
    }
}
