import Testing
@testable import Stash

/// Seeded random operations (reads, writes with costs, removals, limit
/// changes, trims, removeAll) on a `.s3FIFO` MemoryCache and on
/// ``ReferenceAdaptiveFIFO``, compared after every operation: hit or miss,
/// the evicted keys, the resident keys in eviction order, and the small
/// queue's share.
@Suite(.timeLimit(.minutes(5))) struct MemoryCacheS3FIFOModelTests {
    struct Setup: Sendable, CustomTestStringConvertible {
        var countLimit: Int
        var costLimit: Int
        var maxCost: Int
        var keys: Int
        var seed: UInt64
        var testDescription: String { "count \(countLimit), cost \(costLimit), costs 0...\(maxCost), \(keys) keys" }
    }

    @Test(arguments: [
        Setup(countLimit: 12, costLimit: .max, maxCost: 0, keys: 40, seed: 1),
        Setup(countLimit: 150, costLimit: .max, maxCost: 0, keys: 400, seed: 2),
        Setup(countLimit: 30, costLimit: 120, maxCost: 12, keys: 80, seed: 3),
        Setup(countLimit: .max, costLimit: 300, maxCost: 20, keys: 120, seed: 4),
    ])
    func matchesTheReferenceAfterEveryOperation(_ setup: Setup) {
        let cache = makeMemoryCache(Int.self, Int.self, countLimit: setup.countLimit, costLimit: setup.costLimit,
                                    policy: .s3FIFO)
        let queue = cache.core.table.queue as! AdaptiveFIFOQueue
        let events = EvictionRecorder<Int, Int>()
        cache.onEvict = events.callback
        var model = ReferenceAdaptiveFIFO(countLimit: setup.countLimit, costLimit: setup.costLimit,
                                          fingerprint: { EntryTable<Int, Int>.hash($0) })
        var rng = SeededGenerator(seed: setup.seed)
        var sharesSeen: Set<Int> = []
        var recent: [Int] = []
        for step in 0..<20_000 {
            // Skewed keys, so that some are hot, some come back after eviction, and some never do.
            var key = Int.random(in: 0..<setup.keys, using: &rng) % (Bool.random(using: &rng) ? setup.keys : setup.keys / 4)
            // Bursts of reads of recently stored keys, so the small queue gets hits too.
            if recent.count > 0 && Int.random(in: 0..<100, using: &rng) < 30 {
                key = recent[Int.random(in: 0..<recent.count, using: &rng)]
            }
            events.reset()
            var expectedEvictions: [Int] = []
            switch Int.random(in: 0..<100, using: &rng) {
            case 0..<55:
                let hit = cache.value(forKey: key) != nil
                #expect(hit == model.get(key), "step \(step): get \(key)")
            case 55..<93:
                let cost = Int.random(in: 0...setup.maxCost, using: &rng)
                cache.setValue(key, forKey: key, cost: cost)
                recent.append(key)
                if recent.count > 3 { recent.removeFirst() }
                expectedEvictions = model.set(key, cost: cost)
            case 93..<96:
                let removed = cache.removeValue(forKey: key) != nil
                #expect(removed == model.resident.contains(key), "step \(step): remove \(key)")
                if removed { model.remove(key, evicted: false) }
            case 96:
                // A limit moves between half and all of its starting value.
                let countLimit = setup.countLimit == .max ? .max : Int.random(in: setup.countLimit / 2...setup.countLimit, using: &rng)
                let costLimit = setup.costLimit == .max ? .max : Int.random(in: setup.costLimit / 2...setup.costLimit, using: &rng)
                cache.countLimit = countLimit
                cache.costLimit = costLimit
                expectedEvictions = model.setLimits(countLimit: countLimit, costLimit: model.costLimit)
                expectedEvictions += model.setLimits(countLimit: countLimit, costLimit: costLimit)
            case 97:
                let target = Int.random(in: 0...max(cache.count, 1), using: &rng)
                cache.trim(toCount: target)
                expectedEvictions = model.trim(toCount: target, toCost: .max)
            case 98:
                let target = Int.random(in: 0...max(cache.totalCost, 1), using: &rng)
                cache.trim(toCost: target)
                expectedEvictions = model.trim(toCount: .max, toCost: target)
            default:
                if Int.random(in: 0..<20, using: &rng) == 0 {
                    cache.removeAll()
                    model.removeAll()
                }
            }
            let evicted = events.all.filter { $0.reason == .countLimit || $0.reason == .costLimit }.map(\.key)
            #expect(evicted == expectedEvictions, "step \(step): evictions")
            #expect(cache.keys == model.small + model.main, "step \(step): resident keys in eviction order")
            #expect(queue.smallShare == model.share, "step \(step): small queue share")
            #expect(cache.count <= cache.countLimit && cache.totalCost <= cache.costLimit)
            sharesSeen.insert(model.share)
            if step % 1_000 == 0 { #expect(queue.invariantsHold()) }
            if cache.keys != model.small + model.main { return }  // one report, not thousands
        }
        #expect(queue.invariantsHold())
        #expect(sharesSeen.count > 1, "the run exercised adaptation")
    }
}
