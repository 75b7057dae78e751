import Testing
@testable import Stash

/// A deliberately simple reference for MemoryCache: a dictionary plus sorting
/// by policy order. O(n log n) per eviction, obviously right.
private struct ReferenceCache {
    struct Item {
        var value: Int
        var cost: Int
        var writeTime: Int64
        var expiry: Int64
        var uses: Int
        var lastTouch: Int
        var inserted: Int
    }

    let policy: EvictionPolicy
    var countLimit: Int
    var costLimit: Int
    var ageLimit: Int64?
    var items: [String: Item] = [:]
    var tick = 0

    var totalCost: Int { items.values.reduce(0) { $0 + $1.cost } }

    func isExpired(_ item: Item, now: Int64) -> Bool {
        now >= item.expiry || (ageLimit.map { now - item.writeTime >= $0 } ?? false)
    }

    /// Keys, next victim first.
    func evictionOrder() -> [String] {
        items.sorted { lhs, rhs in
            let (a, b) = (lhs.value, rhs.value)
            switch policy {
            case .fifo: return a.inserted < b.inserted
            case .lfu: return (a.uses, a.lastTouch) < (b.uses, b.lastTouch)
            default: return a.lastTouch < b.lastTouch
            }
        }.map(\.key)
    }

    mutating func touch(_ key: String) {
        tick += 1
        switch policy {
        case .fifo: break
        case .lfu:
            items[key]!.uses += 1
            items[key]!.lastTouch = tick
        default:
            items[key]!.lastTouch = tick
        }
    }

    mutating func get(_ key: String, now: Int64) -> Int? {
        guard let item = items[key] else { return nil }
        if isExpired(item, now: now) {
            items[key] = nil
            return nil
        }
        touch(key)
        return item.value
    }

    func contains(_ key: String, now: Int64) -> Bool {
        items[key].map { !isExpired($0, now: now) } ?? false
    }

    mutating func set(_ value: Int, _ key: String, cost: Int, ttl: Int64?, now: Int64) {
        if countLimit < 1 || cost > costLimit || (ttl.map { $0 <= 0 } ?? false) {
            items[key] = nil
            return
        }
        let expiry = ttl.map { now + $0 } ?? .max
        if items[key] != nil {
            items[key]!.value = value
            items[key]!.cost = cost
            items[key]!.writeTime = now
            items[key]!.expiry = expiry
            touch(key)
        } else {
            tick += 1
            items[key] = Item(value: value, cost: cost, writeTime: now, expiry: expiry, uses: 1, lastTouch: tick, inserted: tick)
        }
        trim(protecting: key)
    }

    mutating func remove(_ key: String, now: Int64) -> Int? {
        guard let item = items.removeValue(forKey: key) else { return nil }
        return isExpired(item, now: now) ? nil : item.value
    }

    mutating func trim(protecting protected: String? = nil, toCount: Int? = nil, toCost: Int? = nil) {
        let maxCount = toCount ?? countLimit
        let maxCost = toCost ?? costLimit
        for key in evictionOrder() where key != protected {
            guard items.count > maxCount || totalCost > maxCost else { return }
            items[key] = nil
        }
    }
}

@Suite(.timeLimit(.minutes(5))) struct MemoryCacheModelTests {
    @Test(arguments: [EvictionPolicy.lru, .fifo, .lfu], [UInt64(1), 2, 3])
    func randomOperationsMatchTheReferenceModel(policy: EvictionPolicy, seed: UInt64) {
        var rng = SeededGenerator(seed: seed &* 7919 &+ UInt64(policy.description.count))
        let clock = ManualClock()
        let cache = makeMemoryCache(countLimit: 12, costLimit: 60, ageLimit: .seconds(40), policy: policy, clock: clock)
        var model = ReferenceCache(policy: policy, countLimit: 12, costLimit: 60, ageLimit: 40_000_000_000)
        let keys = (0..<30).map { "k\($0)" }

        for step in 0..<6_000 {
            let key = keys.randomElement(using: &rng)!
            let now = clock.nanosecondsNow
            switch Int.random(in: 0..<100, using: &rng) {
            case 0..<40:
                #expect(cache.value(forKey: key) == model.get(key, now: now), "step \(step): get \(key)")
            case 40..<75:
                let cost = Int.random(in: 0...14, using: &rng)
                let ttlSeconds: Int64? = Bool.random(using: &rng) ? nil : Int64.random(in: -1...30, using: &rng)
                cache.setValue(step, forKey: key, cost: cost, ttl: ttlSeconds.map { .seconds($0) })
                model.set(step, key, cost: cost, ttl: ttlSeconds.map { $0 * 1_000_000_000 }, now: now)
            case 75..<85:
                #expect(cache.removeValue(forKey: key) == model.remove(key, now: now), "step \(step): remove \(key)")
            case 85..<90:
                #expect(cache.contains(key) == model.contains(key, now: now), "step \(step): contains \(key)")
            case 90..<95:
                clock.advance(by: .seconds(Int64.random(in: 1...8, using: &rng)))
            case 95:
                let limit = Int.random(in: 0...15, using: &rng)
                cache.countLimit = limit
                model.countLimit = limit
                model.trim()
            case 96:
                let limit = Int.random(in: 10...80, using: &rng)
                cache.costLimit = limit
                model.costLimit = limit
                model.trim()
            case 97:
                let target = Int.random(in: 0...12, using: &rng)
                cache.trim(toCount: target)
                model.trim(toCount: target, toCost: .max)
            case 98:
                let target = Int.random(in: 0...60, using: &rng)
                cache.trim(toCost: target)
                model.trim(toCount: .max, toCost: target)
            default:
                if Int.random(in: 0..<10, using: &rng) == 0 {
                    cache.removeAll()
                    model.items.removeAll()
                }
            }
            #expect(cache.count == model.items.count, "step \(step): count")
            #expect(cache.totalCost == model.totalCost, "step \(step): totalCost")
            #expect(cache.count <= cache.countLimit && cache.totalCost <= cache.costLimit, "step \(step): limits")
            if step % 50 == 0 {
                let fresh = model.evictionOrder().filter { model.contains($0, now: clock.nanosecondsNow) }
                #expect(cache.keys == fresh, "step \(step): eviction order")
            }
        }
    }
}
