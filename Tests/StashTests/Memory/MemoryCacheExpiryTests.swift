import Testing
@testable import Stash

@Suite(.timeLimit(.minutes(5))) struct MemoryCacheExpiryTests {
    @Test func ttlExpiresAnEntryBeforeAnyTrim() {
        let clock = ManualClock()
        let cache = makeMemoryCache(clock: clock)
        cache.setValue(1, forKey: "a", ttl: .seconds(10))
        cache.setValue(2, forKey: "b")
        clock.advance(by: .seconds(9))
        #expect(cache.value(forKey: "a") == 1)
        clock.advance(by: .seconds(1))
        #expect(cache.value(forKey: "a") == nil)
        #expect(!cache.contains("a"))
        #expect(cache.value(forKey: "b") == 2)
        #expect(cache.count == 1, "the expired entry was removed when it was found")
    }

    @Test func ageLimitCountsFromTheLastWrite() {
        let clock = ManualClock()
        let cache = makeMemoryCache(ageLimit: .seconds(60), clock: clock)
        cache.setValue(1, forKey: "a")
        clock.advance(by: .seconds(30))
        cache.setValue(2, forKey: "b")
        _ = cache.value(forKey: "a")  // reads don't renew
        clock.advance(by: .seconds(30))
        #expect(cache.value(forKey: "a") == nil)
        #expect(cache.value(forKey: "b") == 2)
        cache.setValue(3, forKey: "b")  // writes do
        clock.advance(by: .seconds(45))
        #expect(cache.value(forKey: "b") == 3)
    }

    @Test func ageLimitAppliesToEntriesAlreadyStored() {
        let clock = ManualClock()
        let recorder = EvictionRecorder<String, Int>()
        let cache = makeMemoryCache(clock: clock)
        cache.onEvict = recorder.callback
        cache.setValue(1, forKey: "old")
        clock.advance(by: .seconds(100))
        cache.setValue(2, forKey: "new")
        cache.ageLimit = .seconds(50)
        #expect(cache.ageLimit == .seconds(50))
        #expect(cache.count == 1, "lowering the age limit removes what it expires")
        #expect(recorder.keys(.expired) == ["old"])
        cache.ageLimit = nil
        #expect(cache.ageLimit == nil)
    }

    @Test func ttlAndAgeLimitTheSoonerWins() {
        let clock = ManualClock()
        let cache = makeMemoryCache(ageLimit: .seconds(10), clock: clock)
        cache.setValue(1, forKey: "short", ttl: .seconds(5))
        cache.setValue(2, forKey: "long", ttl: .seconds(500))
        clock.advance(by: .seconds(5))
        #expect(cache.value(forKey: "short") == nil)
        #expect(cache.value(forKey: "long") == 2)
        clock.advance(by: .seconds(5))
        #expect(cache.value(forKey: "long") == nil)
    }

    @Test func nonPositiveTTLStoresNothing() {
        let recorder = EvictionRecorder<String, Int>()
        let cache = makeMemoryCache()
        cache.onEvict = recorder.callback
        cache.setValue(1, forKey: "a")
        cache.setValue(2, forKey: "a", ttl: .zero)
        cache.setValue(3, forKey: "b", ttl: .seconds(-1))
        #expect(cache.count == 0)
        #expect(recorder.all.map(\.reason) == [.replaced, .expired, .expired])
    }

    @Test func overwritingClearsAnOldTTL() {
        let clock = ManualClock()
        let cache = makeMemoryCache(clock: clock)
        cache.setValue(1, forKey: "a", ttl: .seconds(1))
        cache.setValue(2, forKey: "a")
        clock.advance(by: .seconds(100))
        #expect(cache.value(forKey: "a") == 2)
    }

    @Test func removeExpiredSweepsEverythingStale() {
        let clock = ManualClock()
        let recorder = EvictionRecorder<Int, Int>()
        let cache = makeMemoryCache(Int.self, Int.self, clock: clock, checksInvariants: false)
        cache.onEvict = recorder.callback
        for i in 0..<5_000 { cache.setValue(i, forKey: i, ttl: i.isMultiple(of: 2) ? .seconds(1) : nil) }
        clock.advance(by: .seconds(2))
        #expect(cache.count == 5_000, "expired entries wait for a sweep or a lookup")
        cache.removeExpired()
        cache._checkInvariants()
        #expect(cache.count == 2_500)
        #expect(Set(recorder.keys(.expired)) == Set(stride(from: 0, to: 5_000, by: 2)))
        #expect((1..<5_000).allSatisfy { $0.isMultiple(of: 2) || cache.contains($0) })
    }

    @Test func iteratingSkipsExpiredEntriesAndPromisesNoMoreThanItYields() {
        // Given one entry with a 10 ms time to live and one without, and the first expired but not swept.
        let clock = ManualClock()
        let cache = makeMemoryCache(clock: clock)
        cache.setValue(1, forKey: "short", ttl: .milliseconds(10))
        cache.setValue(2, forKey: "kept")
        clock.advance(by: .milliseconds(20))
        #expect(cache.count == 2, "the expired entry is still counted until a sweep")

        // When the standard library's algorithms walk the cache,
        // then they see only the fresh entry (they trapped when the promised count included the expired one).
        #expect(cache.underestimatedCount <= cache.snapshot().count)
        #expect(cache.map { $0.key } == ["kept"])
        #expect(Array(cache).map(\.value) == [2])
        #expect(cache.count == 2, "iterating is not a read: it sweeps nothing")
    }

    @Test func autoTrimSweepRunsOnTheCore() {
        // The timer itself only calls `removeStaleEntries`; drive that directly.
        let clock = ManualClock()
        let cache = makeMemoryCache(ageLimit: .seconds(1), clock: clock)
        cache.setValue(1, forKey: "a")
        clock.advance(by: .seconds(1))
        cache.core.removeStaleEntries()
        #expect(cache.count == 0)
    }

    @Test func autoTrimIntervalCanBeChangedAndDisabled() {
        let cache = MemoryCache<String, Int>(configuration: .init(autoTrimInterval: .seconds(5)))
        #expect(cache.autoTrimInterval == .seconds(5))
        cache.autoTrimInterval = .milliseconds(250)
        #expect(cache.autoTrimInterval == .milliseconds(250))
        cache.autoTrimInterval = .zero
        #expect(cache.autoTrimInterval == nil, "a zero interval turns auto-trim off")
        cache.autoTrimInterval = nil
        #expect(cache.autoTrimInterval == nil)
    }
}
