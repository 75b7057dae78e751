import Testing
@testable import Stash

@Suite(.timeLimit(.minutes(5))) struct MemoryCacheTests {
    @Test func storesAndReadsValues() {
        let cache = makeMemoryCache()
        #expect(cache.value(forKey: "a") == nil)
        cache.setValue(1, forKey: "a", cost: 3)
        cache.setValue(2, forKey: "b", cost: 4)
        #expect(cache.value(forKey: "a") == 1)
        #expect(cache.value(forKey: "b") == 2)
        #expect(cache.count == 2)
        #expect(cache.totalCost == 7)
    }

    @Test func overwriteReplacesValueAndCost() {
        let cache = makeMemoryCache()
        cache.setValue(1, forKey: "a", cost: 10)
        cache.setValue(2, forKey: "a", cost: 4)
        #expect(cache.value(forKey: "a") == 2)
        #expect(cache.count == 1)
        #expect(cache.totalCost == 4)
    }

    @Test func removeValueReturnsWhatWasRemoved() {
        let cache = makeMemoryCache()
        cache.setValue(1, forKey: "a", cost: 5)
        #expect(cache.removeValue(forKey: "a") == 1)
        #expect(cache.removeValue(forKey: "a") == nil)
        #expect(cache.value(forKey: "a") == nil)
        #expect(cache.count == 0)
        #expect(cache.totalCost == 0)
    }

    @Test func removeAllEmptiesTheCacheAndItStaysUsable() {
        let cache = makeMemoryCache()
        for i in 0..<1000 { cache.setValue(i, forKey: "k\(i)", cost: 1) }
        cache.removeAll()
        #expect(cache.count == 0)
        #expect(cache.totalCost == 0)
        #expect(cache.value(forKey: "k1") == nil)
        cache.setValue(7, forKey: "k1")
        #expect(cache.value(forKey: "k1") == 7)
        #expect(cache.count == 1)
    }

    @Test func subscriptReadsWritesAndRemoves() {
        let cache = makeMemoryCache()
        cache["a"] = 1
        #expect(cache["a"] == 1)
        cache["a"] = nil
        #expect(cache["a"] == nil)
        #expect(cache.count == 0)
    }

    @Test func containsDoesNotTouchRecencyOrStatistics() {
        let cache = makeMemoryCache(countLimit: 2)
        cache.setValue(1, forKey: "a")
        cache.setValue(2, forKey: "b")
        #expect(cache.contains("a"))
        #expect(!cache.contains("z"))
        cache.setValue(3, forKey: "c")  // "a" is still least recent, so it goes
        #expect(!cache.contains("a"))
        #expect(cache.keys == ["b", "c"])
        #expect(cache.statistics == CacheStatistics(hits: 0, misses: 0, evictions: 1, evictionsByReason: [.countLimit: 1]))
    }

    @Test func nameIsKept() {
        let cache = MemoryCache<String, Int>(configuration: .init(label: "thumbnails", autoTrimInterval: nil))
        #expect(cache.label == "thumbnails")
    }

    @Test func statisticsCountHitsMissesAndEvictions() {
        let cache = makeMemoryCache(countLimit: 1)
        cache.setValue(1, forKey: "a")
        _ = cache.value(forKey: "a")
        _ = cache.value(forKey: "b")
        cache.setValue(2, forKey: "b")  // evicts "a"
        cache.removeValue(forKey: "b")  // a removal, not an eviction
        let stats = cache.statistics
        #expect(stats.hits == 1)
        #expect(stats.misses == 1)
        #expect(stats.evictions == 1)
        #expect(stats.hitRatio == 0.5)
    }

    @Test func snapshotAndIterationFollowEvictionOrder() {
        let cache = makeMemoryCache()
        cache.setValue(1, forKey: "a", cost: 1)
        cache.setValue(2, forKey: "b", cost: 2)
        cache.setValue(3, forKey: "c", cost: 3)
        _ = cache.value(forKey: "a")
        #expect(cache.keys == ["b", "c", "a"])
        #expect(cache.snapshot().map(\.cost) == [2, 3, 1])
        #expect(Array(cache).map(\.value) == [2, 3, 1])
        // Taking a snapshot is not a read.
        #expect(cache.keys == ["b", "c", "a"])
    }

    @Test func worksWithManyEntriesAndReusesSlots() {
        // Too large to check the invariants after every mutation; checked once per phase.
        let cache = makeMemoryCache(Int.self, Int.self, checksInvariants: false)
        for i in 0..<50_000 { cache.setValue(i * 2, forKey: i, cost: 1) }
        cache._checkInvariants()
        for i in stride(from: 0, to: 50_000, by: 2) { cache.removeValue(forKey: i) }
        cache._checkInvariants()
        for i in 50_000..<75_000 { cache.setValue(i * 2, forKey: i, cost: 1) }
        cache._checkInvariants()
        #expect(cache.count == 50_000)
        #expect(cache.totalCost == 50_000)
        for i in 0..<75_000 {
            let expected: Int? = (i < 50_000 && i % 2 == 0) ? nil : i * 2
            #expect(cache.value(forKey: i) == expected)
        }
    }

    @Test func collidingHashesStayDistinct() {
        // Keys whose hashes are equal exercise probing and backward-shift deletion.
        struct Colliding: Hashable, Sendable {
            var id: Int
            func hash(into hasher: inout Hasher) { hasher.combine(id % 3) }
        }
        let cache = makeMemoryCache(Colliding.self, Int.self)
        for i in 0..<300 { cache.setValue(i, forKey: Colliding(id: i)) }
        for i in stride(from: 0, to: 300, by: 3) { cache.removeValue(forKey: Colliding(id: i)) }
        for i in 0..<300 {
            #expect(cache.value(forKey: Colliding(id: i)) == (i % 3 == 0 ? nil : i))
        }
        #expect(cache.count == 200)
    }

    @Test func cacheIsReleasedWhenNoLongerReferenced() {
        weak var weakCache: MemoryCache<String, Int>?
        do {
            let cache = MemoryCache<String, Int>(configuration: .init(autoTrimInterval: .milliseconds(1)))
            cache.setValue(1, forKey: "a")
            weakCache = cache
        }
        #expect(weakCache == nil, "the auto-trim timer must not keep the cache alive")
    }
}
