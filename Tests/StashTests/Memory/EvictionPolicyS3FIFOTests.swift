import Testing
@testable import Stash

/// Scripted sequences with known outcomes for each rule of ``EvictionPolicy/s3FIFO``.
///
/// With `countLimit` 4 the small queue's budget is 1 entry (its share starts at
/// 0, and it may always hold one entry); the adaptation window is 1 eviction.
/// `keys` lists the small queue oldest first, then the main queue oldest first.
@Suite(.timeLimit(.minutes(5))) struct EvictionPolicyS3FIFOTests {
    /// A cache of capacity 4 holding a, b, c in the main queue and d in the small one.
    private func filledCache(clock: ManualClock = ManualClock()) -> MemoryCache<String, Int> {
        let cache = makeMemoryCache(countLimit: 4, policy: .s3FIFO, clock: clock)
        for (value, key) in ["a", "b", "c", "d"].enumerated() { cache.setValue(value, forKey: key) }
        // While filling, entries past the small queue's budget move on to the main queue.
        #expect(cache.keys == ["d", "a", "b", "c"])
        return cache
    }

    private func queue(_ cache: MemoryCache<String, Int>) -> AdaptiveFIFOQueue {
        cache.core.table.queue as! AdaptiveFIFOQueue
    }

    private func slot(_ cache: MemoryCache<String, Int>, _ key: String) -> Int32 {
        cache.core.table.find(key, hash: EntryTable<String, Int>.hash(key)).slot
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

    @Test func aNewKeyNotReadLeavesFromTheSmallQueueIntoTheGhost() {
        let cache = filledCache()
        cache.setValue(4, forKey: "e")  // d, never read, leaves the small queue
        #expect(cache.keys == ["e", "a", "b", "c"])
        // d's fingerprint is in the ghost: it comes back straight into the main queue.
        cache.setValue(3, forKey: "d")
        #expect(isInMain(cache, "d"))
        #expect(cache.keys == ["e", "b", "c", "d"])  // the main queue made room: a, counter 0, went
        #expect(useCount(cache, "d") == 0)
    }

    /// While the small queue's share is under 10 % (here at its floor: one entry), one read does
    /// not promote: the entry gets a second lap in the small queue, counter 0, and leaves into
    /// the ghost when that lap brings no read.
    @Test func oneReadInASmallQueueUnderTenPercentGivesASecondLapNotPromotion() {
        let cache = filledCache()
        _ = cache.value(forKey: "d")
        cache.setValue(4, forKey: "e")
        #expect(cache.keys == ["e", "a", "b", "c"])
        cache.setValue(3, forKey: "d")
        #expect(isInMain(cache, "d"), "d left into the ghost, and comes back into the main queue")
        #expect(queue(cache).invariantsHold())
    }

    @Test func twoReadsInTheSmallQueuePromoteIt() {
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
        cache.setValue(4, forKey: "e")  // evicts d (counter 0) into the ghost
        cache.setValue(3, forKey: "d")  // a ghost hit: d enters the main queue; the main queue evicts
        // a (1) and b (2) are decremented and go round; c (0) is evicted.
        #expect(cache.keys == ["e", "a", "b", "d"])
        #expect(useCount(cache, "a") == 0)
        #expect(useCount(cache, "b") == 1)
        // d's ghost hit was a marginal one: with the warm-up's bonus, the small queue's budget grew to
        // 2 entries, so e stays beside e2, and the main queue gives up a (counter 0 after its round).
        cache.setValue(5, forKey: "e2")
        #expect(cache.keys == ["e", "e2", "b", "d"])
    }

    /// LIRS's rule: a key back from the ghost enters the main queue only in place of an entry
    /// that has been idle longer than the key was away (both counted in evictions from the small
    /// queue); else it comes back as a new key.
    @Test func aKeyBackFromTheGhostDisplacesOnlyAnEntryIdleLongerThanItWasAway() {
        for readsMain in [false, true] {
            let cache = filledCache()
            cache.setValue(4, forKey: "e")  // d into the ghost
            cache.setValue(5, forKey: "f")  // e into the ghost
            cache.setValue(6, forKey: "g")  // f into the ghost: d was evicted 2 evictions ago
            #expect(cache.keys == ["g", "a", "b", "c"])
            if readsMain {
                // a, b and c go round once more while the victim is sought: idle for 0 evictions.
                for key in ["a", "b", "c"] { _ = cache.value(forKey: key) }
                cache.setValue(3, forKey: "d")
                #expect(!isInMain(cache, "d"), "a, idle for less time than d was away, stays")
                #expect(cache.keys == ["d", "a", "b", "c"])  // g left the small queue instead
            } else {
                cache.setValue(3, forKey: "d")
                #expect(isInMain(cache, "d"), "a, idle since the cache filled (3 evictions), goes")
                #expect(cache.keys == ["g", "b", "c", "d"])
            }
            #expect(queue(cache).invariantsHold())
        }
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

    @Test func marginalHitsMoveTheSmallQueueByOneEntryAndTheWarmUpsBonus() {
        // countLimit 100: the window is 10 evictions; one entry of capacity is `step`.
        let cache = makeMemoryCache(Int.self, Int.self, countLimit: 100, policy: .s3FIFO)
        let queue = cache.core.table.queue as! AdaptiveFIFOQueue
        let step = (AdaptiveFIFOQueue.shareScale + 99) / 100
        let inMain = { (key: Int) in queue.isInMainQueue(cache.core.table.find(key, hash: EntryTable<Int, Int>.hash(key)).slot) }
        for key in 0..<100 { cache.setValue(key, forKey: key) }
        #expect(queue.smallShare == 0 && queue.smallCount == 1, "the small queue starts at one entry")
        cache.setValue(100, forKey: 100)  // 99 leaves the small queue into the ghost
        cache.setValue(99, forKey: 99)  // evicted 0 evictions ago: a larger small queue would have kept it
        // One entry, and the warm-up's bonus: one eviction from the small queue so far.
        let bonus = AdaptiveFIFOQueue.warmUpBonus(step: step, capacity: 100, evictions: 1)
        #expect(bonus == step * 2 * 100 / 101)
        #expect(queue.smallShare == step + bonus)
        #expect(inMain(99))
        // 99 entered the main queue, which evicted 0 into the shadow; 0 comes back.
        cache.setValue(0, forKey: 0)  // a larger main queue would have kept it
        #expect(queue.smallShare == 0)
        #expect(!inMain(0))
        // 100 left the small queue just now; 11 more leave after it, past the window.
        for key in 200..<211 { cache.setValue(key, forKey: key) }
        cache.setValue(100, forKey: 100)
        #expect(inMain(100), "still a ghost hit")
        #expect(queue.smallShare == 0, "but not a marginal one")
        // 100 entering the main queue evicted 1 into the shadow: at the lower bound, the share stays.
        cache.setValue(1, forKey: 1)
        #expect(queue.smallShare == 0)
        #expect(queue.invariantsHold())
    }

    /// Brings back, again and again, the key the small queue has just evicted,
    /// until the small queue's share reaches its upper bound.
    private func growSmallQueueToItsBound(_ cache: MemoryCache<Int, Int>, firstNewKey: Int, cost: Int = 0) {
        let queue = cache.core.table.queue as! AdaptiveFIFOQueue
        let events = EvictionRecorder<Int, Int>()
        cache.onEvict = events.callback
        var newKey = firstNewKey
        while queue.smallShare < AdaptiveFIFOQueue.maxSmallShare && newKey < firstNewKey + 10_000 {
            let small = Set(cache.keys.prefix(queue.smallCount))
            events.reset()
            cache.setValue(newKey, forKey: newKey, cost: cost)
            newKey += 1
            for key in events.all.map(\.key) where small.contains(key) {
                let before = queue.smallShare
                cache.setValue(key, forKey: key, cost: cost)
                #expect(queue.smallShare > before || queue.smallShare == AdaptiveFIFOQueue.maxSmallShare)
            }
            #expect(cache.count <= cache.countLimit && cache.totalCost <= cache.costLimit)
        }
        cache.onEvict = nil
    }

    @Test func theSmallQueueGrowsUpToNinetyPercent() {
        let cache = makeMemoryCache(Int.self, Int.self, countLimit: 100, policy: .s3FIFO)
        let queue = cache.core.table.queue as! AdaptiveFIFOQueue
        for key in 0..<100 { cache.setValue(key, forKey: key) }
        growSmallQueueToItsBound(cache, firstNewKey: 1_000)
        #expect(queue.smallShare == AdaptiveFIFOQueue.maxSmallShare)
        // The budget is now 89 entries (90 % rounded down); new keys fill the small queue up to it.
        for key in 20_000..<20_100 { cache.setValue(key, forKey: key) }
        #expect(queue.smallCount == 89)
        #expect(queue.invariantsHold())
    }

    @Test func aLargeDropInTheBudgetMovesABoundedNumberPerOperation() {
        let cache = makeMemoryCache(Int.self, Int.self, countLimit: 100, policy: .s3FIFO)
        let queue = cache.core.table.queue as! AdaptiveFIFOQueue
        for key in 0..<100 { cache.setValue(key, forKey: key) }
        growSmallQueueToItsBound(cache, firstNewKey: 1_000)
        cache.trim(toCount: 0)
        cache.countLimit = 10_000  // a budget of 8,999 entries
        for key in 20_000..<20_800 { cache.setValue(key, forKey: key) }
        #expect(queue.smallCount == 800)
        cache.countLimit = 850  // budget 764; nothing to evict
        #expect(queue.smallCount == 800)
        cache.setValue(0, forKey: 30_000)
        #expect(queue.smallCount == 801 - AdaptiveFIFOQueue.maxTransfers)
        cache.setValue(0, forKey: 30_001)
        #expect(queue.smallCount == 802 - 2 * AdaptiveFIFOQueue.maxTransfers)
        #expect(queue.invariantsHold())
    }

    @Test func costLimitsBudgetTheSmallQueueInCost() {
        // costLimit 1,000 and entries of cost 10: capacity is the 100 entries held.
        let cache = makeMemoryCache(Int.self, Int.self, costLimit: 1_000, policy: .s3FIFO)
        let queue = cache.core.table.queue as! AdaptiveFIFOQueue
        for key in 0..<100 { cache.setValue(key, forKey: key, cost: 10) }
        #expect(queue.smallCount == 1, "a share of 0 still holds one entry, whatever its cost")
        growSmallQueueToItsBound(cache, firstNewKey: 1_000, cost: 10)
        #expect(queue.smallShare == AdaptiveFIFOQueue.maxSmallShare)
        // 90 % of 1,000 cost units, rounded down: 899, so 89 entries of cost 10.
        for key in 20_000..<20_100 {
            cache.setValue(key, forKey: key, cost: 10)
            #expect(cache.totalCost <= 1_000)
        }
        #expect(queue.smallCount == 89)
        // An overwrite that takes the small queue to 900 cost units moves its oldest on.
        let (oldest, second) = (cache.keys[0], cache.keys[1])
        cache.setValue(0, forKey: second, cost: 20)
        #expect(queue.smallCount == 88)
        #expect(queue.isInMainQueue(cache.core.table.find(oldest, hash: EntryTable<Int, Int>.hash(oldest)).slot))
        #expect(cache.totalCost <= 1_000)
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
