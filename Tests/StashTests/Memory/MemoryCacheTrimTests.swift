import Testing
@testable import Stash

@Suite(.timeLimit(.minutes(5))) struct MemoryCacheTrimTests {
    private func filled(_ policy: EvictionPolicy = .lru, clock: ManualClock = ManualClock()) -> MemoryCache<String, Int> {
        let cache = makeMemoryCache(policy: policy, clock: clock)
        for (i, cost) in [5, 1, 9, 3, 9].enumerated() {
            cache.setValue(i, forKey: "k\(i)", cost: cost)
            clock.advance(by: .seconds(10))
        }
        return cache
    }

    @Test func trimToCountEvictsInPolicyOrder() {
        let cache = filled()
        _ = cache.value(forKey: "k0")
        cache.trim(toCount: 2)
        #expect(cache.keys == ["k4", "k0"])
    }

    @Test func trimToCostEvictsInPolicyOrder() {
        let cache = filled()
        cache.trim(toCost: 12)
        #expect(cache.keys == ["k3", "k4"])
        #expect(cache.totalCost == 12)
    }

    @Test func trimCostliestEvictsTheCostliestFirst() {
        let recorder = EvictionRecorder<String, Int>()
        let cache = filled()
        cache.onEvict = recorder.callback
        cache.trimCostliest(toCost: 10)
        // k2 and k4 cost 9 each: the one earlier in eviction order goes first.
        #expect(recorder.keys(.costLimit) == ["k2", "k4"])
        #expect(cache.keys == ["k0", "k1", "k3"])
        #expect(cache.totalCost == 9)
        cache.trimCostliest(toCost: 100)
        #expect(cache.count == 3, "nothing to do when already within the target")
    }

    @Test func trimToAgeRemovesEntriesWrittenThatLongAgo() {
        let clock = ManualClock()
        let cache = filled(clock: clock)
        // Writes happened at t = 0, 10, 20, 30, 40; now t = 50.
        cache.trim(toAge: .seconds(25))
        #expect(cache.keys == ["k3", "k4"])
        cache.trim(toAge: .zero)
        #expect(cache.count == 0)
    }

    @Test(arguments: [EvictionPolicy.lru, .fifo, .lfu])
    func trimsWorkOnLargeCaches(policy: EvictionPolicy) {
        let cache = makeMemoryCache(Int.self, Int.self, policy: policy, checksInvariants: false)
        for i in 0..<10_000 { cache.setValue(i, forKey: i, cost: i % 7) }
        cache.trim(toCount: 5_000)
        cache._checkInvariants()
        #expect(cache.count == 5_000)
        cache.trim(toCost: 1_000)
        cache._checkInvariants()
        #expect(cache.totalCost <= 1_000)
        let expected = cache.snapshot().reduce(0) { $0 + $1.cost }
        #expect(cache.totalCost == expected)
    }
}
