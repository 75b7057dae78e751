import Testing
@testable import Stash

@Suite(.timeLimit(.minutes(5))) struct EvictionPolicyTests {
    /// Fills a cache of capacity 3 with a, b, c, then runs `script`.
    private func cache(_ policy: EvictionPolicy) -> MemoryCache<String, Int> {
        let cache = makeMemoryCache(countLimit: 3, policy: policy)
        cache.setValue(1, forKey: "a")
        cache.setValue(2, forKey: "b")
        cache.setValue(3, forKey: "c")
        return cache
    }

    @Test func lruEvictsLeastRecentlyUsed() {
        let cache = cache(.lru)
        _ = cache.value(forKey: "a")  // order: b c a
        cache.setValue(4, forKey: "d")  // evicts b
        #expect(cache.keys == ["c", "a", "d"])
        cache.setValue(30, forKey: "c")  // a write is a use: a d c
        cache.setValue(5, forKey: "e")  // evicts a
        #expect(cache.keys == ["d", "c", "e"])
    }

    @Test func fifoIgnoresReadsAndOverwrites() {
        let cache = cache(.fifo)
        _ = cache.value(forKey: "a")
        cache.setValue(10, forKey: "a")
        cache.setValue(4, forKey: "d")  // a is still first in
        #expect(cache.keys == ["b", "c", "d"])
        #expect(cache.value(forKey: "a") == nil)
        cache.setValue(5, forKey: "e")
        #expect(cache.keys == ["c", "d", "e"])
    }

    @Test func lfuEvictsLeastFrequentlyUsedThenLeastRecent() {
        let cache = cache(.lfu)
        _ = cache.value(forKey: "a")
        _ = cache.value(forKey: "a")  // a: 3 uses
        _ = cache.value(forKey: "c")  // c: 2 uses, b: 1
        #expect(cache.keys == ["b", "c", "a"])
        cache.setValue(4, forKey: "d")  // evicts b (1 use)
        #expect(cache.keys == ["d", "c", "a"])
        cache.setValue(5, forKey: "e")  // d and e both have 1 use; d is older, and e is being set
        #expect(cache.keys == ["e", "c", "a"])
        _ = cache.value(forKey: "e")  // e: 2, c: 2; c used less recently
        #expect(cache.keys == ["c", "e", "a"])
    }

    @Test func lfuNeverEvictsTheEntryBeingWritten() {
        let cache = makeMemoryCache(costLimit: 10, policy: .lfu)
        cache.setValue(1, forKey: "hot", cost: 2)
        for _ in 0..<5 { _ = cache.value(forKey: "hot") }
        cache.setValue(2, forKey: "new", cost: 5)
        // Growing "new" must evict "hot" (more uses) rather than "new" itself.
        cache.setValue(3, forKey: "new", cost: 9)
        #expect(cache.keys == ["new"])
        #expect(cache.value(forKey: "new") == 3)
    }

    @Test func fifoOverwriteThatGrowsCostKeepsTheWrittenEntry() {
        let cache = makeMemoryCache(costLimit: 10, policy: .fifo)
        cache.setValue(1, forKey: "old", cost: 5)
        cache.setValue(2, forKey: "young", cost: 5)
        cache.setValue(3, forKey: "old", cost: 6)  // "old" is first in, but it is being written
        #expect(cache.keys == ["old"])
        #expect(cache.totalCost == 6)
    }

    @Test(arguments: [EvictionPolicy.lru, .fifo, .lfu])
    func everyPolicyHandlesRemovalsInTheMiddle(policy: EvictionPolicy) {
        let cache = makeMemoryCache(countLimit: 4, policy: policy)
        for (i, key) in ["a", "b", "c", "d"].enumerated() { cache.setValue(i, forKey: key) }
        cache.removeValue(forKey: "b")
        cache.removeValue(forKey: "d")
        cache.setValue(9, forKey: "e")
        #expect(cache.keys == ["a", "c", "e"])
        #expect(policy.description == "\(policy)")
    }
}
