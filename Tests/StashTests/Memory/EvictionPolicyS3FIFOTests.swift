import Testing
@testable import Stash

/// Scripted sequences with known outcomes for each rule of ``EvictionPolicy/s3FIFO``.
///
/// With `countLimit` 4 the small queue's budget is 1 entry (1 %, at least 1).
/// `keys` lists the small queue oldest first, then the main queue oldest first.
@Suite struct EvictionPolicyS3FIFOTests {
    /// A cache of capacity 4 holding a, b, c in the main queue and d in the small one.
    private func filledCache(clock: ManualClock = ManualClock()) -> MemoryCache<String, Int> {
        let cache = makeMemoryCache(countLimit: 4, policy: .s3FIFO, clock: clock)
        for (value, key) in ["a", "b", "c", "d"].enumerated() { cache.setValue(value, forKey: key) }
        // While filling, entries past the small queue's budget move on to the main queue.
        #expect(cache.keys == ["d", "a", "b", "c"])
        return cache
    }

    private func queue(_ cache: MemoryCache<String, Int>) -> AdaptiveFIFOQueue {
        cache.core.storage.queue as! AdaptiveFIFOQueue
    }

    private func slot(_ cache: MemoryCache<String, Int>, _ key: String) -> Int32 {
        cache.core.storage.find(key, hash: MemoryCacheStorage<String, Int>.hash(key)).slot
    }

    private func useCount(_ cache: MemoryCache<String, Int>, _ key: String) -> Int {
        queue(cache).useCount(of: slot(cache, key))
    }

    private func isInMain(_ cache: MemoryCache<String, Int>, _ key: String) -> Bool {
        queue(cache).isInMainQueue(slot(cache, key))
    }

    @Test func aHitBumpsTheCounterUpToThreeAndMovesNothing() {
        let cache = filledCache()
        for expected in [1, 2, 3, 3, 3] {
            _ = cache.value(forKey: "b")
            #expect(useCount(cache, "b") == expected)
        }
        #expect(cache.keys == ["d", "a", "b", "c"])
    }

    @Test func anOverwriteCountsAsAHit() {
        let cache = filledCache()
        cache.setValue(10, forKey: "d")
        cache.setValue(11, forKey: "d")
        #expect(useCount(cache, "d") == 2)
        #expect(cache.keys == ["d", "a", "b", "c"])
        // With counter 2, d moves on to the main queue instead of being evicted; a goes.
        cache.setValue(4, forKey: "e")
        #expect(cache.keys == ["e", "b", "c", "d"])
        #expect(useCount(cache, "d") == 0)
    }

    @Test func aNewKeyReadOnceLeavesFromTheSmallQueueIntoTheGhost() {
        let cache = filledCache()
        _ = cache.value(forKey: "d")  // counter 1: below the promotion threshold
        cache.setValue(4, forKey: "e")
        #expect(cache.keys == ["e", "a", "b", "c"])
        // d's fingerprint is in the ghost: it comes back straight into the main queue.
        cache.setValue(3, forKey: "d")
        #expect(isInMain(cache, "d"))
        #expect(cache.keys == ["e", "b", "c", "d"])  // the main queue made room: a, counter 0, went
        #expect(useCount(cache, "d") == 0)
    }

    @Test func smallQueuePromotionNeedsACounterOfTwo() {
        let cache = filledCache()
        _ = cache.value(forKey: "d")
        _ = cache.value(forKey: "d")
        cache.setValue(4, forKey: "e")
        #expect(cache.keys == ["e", "b", "c", "d"])
        #expect(isInMain(cache, "d"))
        #expect(useCount(cache, "d") == 0)
    }

    @Test func theMainQueueGivesCountedEntriesAnotherRound() {
        let cache = filledCache()
        _ = cache.value(forKey: "a")  // a: 1
        _ = cache.value(forKey: "b")
        _ = cache.value(forKey: "b")  // b: 2
        _ = cache.value(forKey: "d")
        cache.setValue(4, forKey: "e")  // evicts d (counter 1) into the ghost
        cache.setValue(3, forKey: "d")  // a ghost hit: d enters the main queue; the main queue evicts
        // a (1) and b (2) are decremented and go round; c (0) is evicted.
        #expect(cache.keys == ["e", "a", "b", "d"])
        #expect(useCount(cache, "a") == 0)
        #expect(useCount(cache, "b") == 1)
        cache.setValue(5, forKey: "e2")  // e (counter 0) leaves the small queue
        cache.setValue(4, forKey: "e")  // ghost hit again: a, now at 0, is the main queue's oldest and goes
        #expect(cache.keys == ["e2", "b", "d", "e"])
    }

    @Test func explicitRemovalsAndExpiryDoNotEnterTheGhost() {
        let clock = ManualClock()
        let cache = filledCache(clock: clock)
        #expect(cache.removeValue(forKey: "d") == 3)
        cache.setValue(3, forKey: "d")
        #expect(!isInMain(cache, "d"), "a removed key comes back as new")

        cache.setValue(9, forKey: "t", ttl: .seconds(1))  // evicts d (into the ghost), t in the small queue
        clock.advance(by: .seconds(2))
        #expect(cache.value(forKey: "t") == nil)  // expired: removed, not evicted by a limit
        cache.setValue(9, forKey: "t")
        #expect(!isInMain(cache, "t"))
        cache.setValue(3, forKey: "d")
        #expect(isInMain(cache, "d"), "an evicted key is remembered")
    }

    @Test func evictionsAreReportedWithTheirLimitReasons() {
        let cache = filledCache()
        let events = EvictionRecorder<String, Int>()
        cache.onEvict = events.callback
        cache.setValue(4, forKey: "e")
        cache.countLimit = 2
        // The small queue is within its budget of 1, so the main queue gives up its oldest.
        #expect(events.all.map(\.key) == ["d", "a", "b"])
        #expect(events.all.allSatisfy { $0.reason == .countLimit })
        #expect(cache.keys == ["e", "c"])
    }

    @Test func theSmallQueueGrowsTowardDenserHits() {
        // countLimit 100: period 400 requests once the cache has evicted; small budget 1.
        let cache = makeMemoryCache(Int.self, Int.self, countLimit: 100, policy: .s3FIFO)
        let queue = cache.core.storage.queue as! AdaptiveFIFOQueue
        for key in 0..<100 { cache.setValue(key, forKey: key) }
        // Each round: a new key (1 request), then 3 hits while it is in the small queue.
        for round in 0..<100 {
            cache.setValue(0, forKey: 1_000 + round)
            for _ in 0..<3 { _ = cache.value(forKey: 1_000 + round) }
        }
        #expect(queue.smallShare == 10, "400 requests counted, the period ends at the next insert")
        cache.setValue(0, forKey: 5_000)
        // 300 small-queue hits, none in the main queue: the full step of 3 % of capacity.
        #expect(queue.smallShare == 40)
        // Now only main-queue hits: one full step back down, never below 1 %.
        let mainKeys = cache.keys.filter { queue.isInMainQueue(cache.core.storage.find($0, hash: MemoryCacheStorage<Int, Int>.hash($0)).slot) }
        for step in 0..<400 { _ = cache.value(forKey: mainKeys[step % 10]) }
        cache.setValue(0, forKey: 5_001)
        #expect(queue.smallShare == 10)
        #expect(queue.invariantsHold())
    }

    @Test func aLargeDropInTheBudgetMovesABoundedNumberPerOperation() {
        let cache = makeMemoryCache(Int.self, Int.self, countLimit: 100_000, policy: .s3FIFO)
        let queue = cache.core.storage.queue as! AdaptiveFIFOQueue
        for key in 0..<1_000 { cache.setValue(key, forKey: key) }
        #expect(queue.smallCount == 1_000, "a budget of 1,000 entries")
        cache.countLimit = 2_000  // budget 20; nothing to evict
        #expect(queue.smallCount == 1_000)
        cache.setValue(0, forKey: 5_000)
        #expect(queue.smallCount == 1_001 - AdaptiveFIFOQueue.maxTransfers)
        cache.setValue(0, forKey: 5_001)
        #expect(queue.smallCount == 1_002 - 2 * AdaptiveFIFOQueue.maxTransfers)
        #expect(queue.invariantsHold())
    }

    @Test func costLimitsBudgetTheSmallQueueInCost() {
        // costLimit 1,000: the small queue holds at most 10 cost units.
        let cache = makeMemoryCache(costLimit: 1_000, policy: .s3FIFO)
        let queue = queue(cache)
        cache.setValue(0, forKey: "a", cost: 4)
        cache.setValue(1, forKey: "b", cost: 4)
        #expect(queue.smallCount == 2)
        cache.setValue(2, forKey: "c", cost: 4)  // 12 > 10: a moves on
        #expect(cache.keys == ["b", "c", "a"])
        cache.setValue(3, forKey: "b", cost: 9)  // b's new cost: 13 > 10, b moves on
        #expect(cache.keys == ["c", "a", "b"])
        // Filling to the cost limit evicts new entries from the small queue first.
        for index in 0..<300 {
            cache.setValue(index, forKey: "k\(index)", cost: 7)
            #expect(cache.totalCost <= 1_000)
        }
        #expect(queue.invariantsHold())
    }

    @Test func anOverwriteThatGrowsKeepsTheWrittenEntry() {
        let cache = makeMemoryCache(costLimit: 10, policy: .s3FIFO)
        cache.setValue(1, forKey: "old", cost: 2)
        cache.setValue(2, forKey: "new", cost: 5)
        cache.setValue(3, forKey: "new", cost: 10)
        #expect(cache.keys == ["new"])
        #expect(cache.value(forKey: "new") == 3)
        #expect(queue(cache).invariantsHold())
    }

    @Test func removeAllForgetsTheGhost() {
        let cache = filledCache()
        cache.setValue(4, forKey: "e")  // d into the ghost
        cache.removeAll()
        for (value, key) in ["a", "b", "c", "x"].enumerated() { cache.setValue(value, forKey: key) }
        cache.setValue(3, forKey: "d")
        #expect(!isInMain(cache, "d"))
    }
}
