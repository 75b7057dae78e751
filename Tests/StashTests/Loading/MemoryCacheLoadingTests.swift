import Testing
@testable import Stash

@Suite(.timeLimit(.minutes(5))) struct MemoryCacheLoadingTests {
    // MARK: Hits and misses

    @Test func aMissLoadsAndStoresAndTheNextCallHits() async throws {
        let cache = makeLoadingCache()
        let loader = ScriptedLoader(value: 7)
        #expect(try await cache.value(forKey: "k", orLoad: loader.load) == 7)
        #expect(cache.value(forKey: "k") == 7)
        #expect(try await cache.value(forKey: "k", orLoad: loader.load) == 7)
        #expect(loader.calls.count == 1)
        let statistics = cache.statistics
        #expect(statistics.loadSuccesses == 1)
        #expect(statistics.loadTimes.count == 1)
        #expect(statistics.hits == 2)
        #expect(statistics.misses == 1)
    }

    @Test func theLoaderExpressionIsEvaluatedOnlyWhenALoadStarts() async throws {
        let clock = ManualClock()
        let cache = makeLoadingCache(clock: clock, options: LoadOptions(ttl: .seconds(60), refreshAfter: .seconds(45)))
        let loader = ScriptedLoader(value: 1)
        var formed = 0
        func makeLoader() -> @Sendable (String) async throws -> Int {
            formed += 1
            return loader.load
        }
        #expect(try await cache.value(forKey: "k", orLoad: makeLoader()) == 1)
        #expect(formed == 1, "a miss forms the loader")
        #expect(try await cache.value(forKey: "k", orLoad: makeLoader()) == 1)
        #expect(formed == 1, "a hit does not")

        loader.willReturn(2)
        clock.advance(by: .seconds(45))
        #expect(try await cache.value(forKey: "k", orLoad: makeLoader()) == 1, "due for refresh: the old value, at once")
        #expect(formed == 2, "a hit due for a refresh forms it, for the refresh")
        try await yield { cache.value(forKey: "k") == 2 }
        #expect(loader.calls.count == 2)
    }

    @Test func aCallsOptionsReplaceTheCachesOptions() async throws {
        let clock = ManualClock()
        let cache = makeLoadingCache(clock: clock, options: LoadOptions(ttl: .seconds(60), staleIfError: .seconds(60)))
        var shortLived = cache.loadOptions
        shortLived.ttl = .seconds(5)
        _ = try await cache.value(forKey: "short", options: shortLived) { _ in 1 }
        _ = try await cache.value(forKey: "long") { _ in 2 }
        clock.advance(by: .seconds(5))
        #expect(cache.value(forKey: "short") == nil, "the call's time to live")
        #expect(cache.value(forKey: "long") == 2, "the cache's")
        #expect(try await cache.value(forKey: "short", options: shortLived) { _ in throw LoadFailure() } == 1,
                "the copied options kept the cache's staleIfError")
        _ = try await cache.value(forKey: "scratch", options: LoadOptions(ttl: .seconds(5))) { _ in 3 }
        clock.advance(by: .seconds(5))
        await #expect(throws: LoadFailure.self, "options made from scratch have no staleIfError: nothing was kept") {
            try await cache.value(forKey: "scratch", options: LoadOptions(ttl: .seconds(5))) { _ in throw LoadFailure() }
        }
    }

    @Test func aLoadedValueLivesForItsTTLAndHasItsCost() async throws {
        let clock = ManualClock()
        let cache = makeLoadingCache(
            clock: clock, options: LoadOptions(ttl: .seconds(10)), loadedValueCost: { $0 * 2 })
        let loader = ScriptedLoader(value: 5)
        _ = try await cache.value(forKey: "k", orLoad: loader.load)
        #expect(cache.totalCost == 10)
        clock.advance(by: .seconds(10))
        #expect(cache.value(forKey: "k") == nil)
        loader.willReturn(6)
        #expect(try await cache.value(forKey: "k", orLoad: loader.load) == 6)
        #expect(loader.calls.count == 2)
    }

    @Test func aThrowingLoadStoresNothingAndTheNextCallLoadsAgain() async throws {
        let cache = makeLoadingCache()
        let loader = ScriptedLoader()
        loader.willThrow(LoadFailure())
        await #expect(throws: LoadFailure.self) { try await cache.value(forKey: "k", orLoad: loader.load) }
        #expect(cache.count == 0)
        loader.willReturn(3)
        #expect(try await cache.value(forKey: "k", orLoad: loader.load) == 3)
        #expect(cache.statistics.loadFailures == 1)
        #expect(cache.statistics.loadSuccesses == 1)
    }

    // MARK: Refresh ahead

    @Test func aHitPastRefreshAfterReturnsTheOldValueAndReloadsOnce() async throws {
        let clock = ManualClock()
        let cache = makeLoadingCache(clock: clock, options: LoadOptions(ttl: .seconds(60), refreshAfter: .seconds(45)))
        let loader = ScriptedLoader(value: 1)
        _ = try await cache.value(forKey: "k", orLoad: loader.load)
        clock.advance(by: .seconds(44))
        #expect(try await cache.value(forKey: "k", orLoad: loader.load) == 1)
        #expect(loader.calls.count == 1)

        let reload = ScriptedLoader(value: 2, held: true)
        clock.advance(by: .seconds(1))
        // Three hits while the reload is held: all get the old value, one reload runs.
        for _ in 0..<3 {
            #expect(try await cache.value(forKey: "k", orLoad: reload.load) == 1)
        }
        try await yield { reload.gate!.waitingCount == 1 }
        #expect(reload.calls.count == 1)
        reload.gate!.open()
        try await yield { cache.value(forKey: "k") == 2 }
        #expect(try await cache.value(forKey: "k", orLoad: reload.load) == 2)
        #expect(reload.calls.count == 1)
        #expect(cache.statistics.refreshes == 1)
    }

    @Test func aFailedRefreshKeepsTheValueAndIsCounted() async throws {
        let clock = ManualClock()
        let log = LogRecorder()
        let cache = makeLoadingCache(clock: clock, options: LoadOptions(refreshAfter: .seconds(5)), log: log)
        let loader = ScriptedLoader(value: 1)
        _ = try await cache.value(forKey: "k", orLoad: loader.load)
        clock.advance(by: .seconds(5))
        loader.willThrow(LoadFailure())
        #expect(try await cache.value(forKey: "k", orLoad: loader.load) == 1)
        try await yield { cache.statistics.loadFailures == 1 }
        #expect(cache.value(forKey: "k") == 1)
        #expect(log.messages(at: .warning).count == 1)
    }

    // MARK: Fail-safe

    @Test func aFailingLoadReturnsTheStaleValueWithinStaleIfErrorAndNotAfter() async throws {
        let clock = ManualClock()
        let log = LogRecorder()
        let cache = makeLoadingCache(
            clock: clock, options: LoadOptions(ttl: .seconds(10), staleIfError: .seconds(30)), log: log)
        let loader = ScriptedLoader(value: 1)
        _ = try await cache.value(forKey: "k", orLoad: loader.load)
        clock.advance(by: .seconds(10))
        // Expired: a plain lookup misses, and the entry is kept.
        #expect(cache.value(forKey: "k") == nil)
        #expect(!cache.contains("k"))
        #expect(cache.count == 1)
        #expect(cache.snapshot().isEmpty)

        loader.willThrow(LoadFailure())
        #expect(try await cache.value(forKey: "k", orLoad: loader.load) == 1)
        clock.advance(by: .seconds(29))
        #expect(try await cache.value(forKey: "k", orLoad: loader.load) == 1)
        clock.advance(by: .seconds(1))
        await #expect(throws: LoadFailure.self) { try await cache.value(forKey: "k", orLoad: loader.load) }
        #expect(cache.count == 0)

        let statistics = cache.statistics
        #expect(statistics.staleValuesServed == 2)
        #expect(statistics.loadFailures == 3)
        // One incident, one warning; the rest at debug level.
        #expect(log.messages(at: .warning).count == 1)
        #expect(log.messages(at: .debug).count == 2)
        loader.willReturn(9)
        #expect(try await cache.value(forKey: "k", orLoad: loader.load) == 9)
        #expect(log.contains(level: .info, "recovered after 3"))
    }

    @Test func theSweepKeepsAnEntryForItsGraceThenRemovesIt() async throws {
        let clock = ManualClock()
        let cache = makeLoadingCache(clock: clock, options: LoadOptions(ttl: .seconds(1), staleIfError: .seconds(5)))
        _ = try await cache.value(forKey: "k") { _ in 1 }
        clock.advance(by: .seconds(2))
        cache.removeExpired()
        #expect(cache.count == 1)
        clock.advance(by: .seconds(4))
        cache.removeExpired()
        #expect(cache.count == 0)
        #expect(cache.statistics.evictionsByReason == [.expired: 1])
    }

    // MARK: Timeouts

    @Test func aSoftTimeoutReturnsTheStaleValueAndTheLateLoadIsStillStored() async throws {
        let clock = ManualClock()
        let cache = makeLoadingCache(
            clock: clock,
            options: LoadOptions(ttl: .seconds(10), staleIfError: .seconds(60), softTimeout: .seconds(1)))
        _ = try await cache.value(forKey: "k") { _ in 1 }
        clock.advance(by: .seconds(10))
        let slow = ScriptedLoader(value: 2, held: true)
        let caller = Task { try await cache.value(forKey: "k", orLoad: slow.load) }
        try await yield { clock.sleeperCount == 1 && slow.gate!.waitingCount == 1 }
        clock.advance(by: .seconds(1))
        #expect(try await caller.value == 1)
        slow.gate!.open()
        try await yield { cache.value(forKey: "k") == 2 }
        #expect(cache.statistics.staleValuesServed == 1)
    }

    @Test func withNoStaleValueTheSoftTimeoutWaitsOnToTheHardTimeoutWhichThrows() async throws {
        let clock = ManualClock()
        let cache = makeLoadingCache(
            clock: clock, options: LoadOptions(softTimeout: .seconds(1), hardTimeout: .seconds(3)))
        let slow = ScriptedLoader(value: 2, held: true)
        let caller = Task { try await cache.value(forKey: "k", orLoad: slow.load) }
        try await yield { clock.sleeperCount == 1 && slow.gate!.waitingCount == 1 }
        clock.advance(by: .seconds(2))
        #expect(cache.count == 0)
        clock.advance(by: .seconds(1))
        await #expect { try await caller.value } throws: { StashError.Code.timedOut ~= $0 }
        // The load goes on and stores its value.
        slow.gate!.open()
        try await yield { cache.value(forKey: "k") == 2 }
    }

    // MARK: Errors cached

    @Test func aCachedErrorIsThrownAgainWithoutLoadingUntilItsTTLEnds() async throws {
        let clock = ManualClock()
        let cache = makeLoadingCache(clock: clock, options: LoadOptions(errorTTL: .seconds(5)))
        let loader = ScriptedLoader()
        loader.willThrow(LoadFailure())
        for _ in 0..<3 {
            await #expect(throws: LoadFailure.self) { try await cache.value(forKey: "k", orLoad: loader.load) }
        }
        #expect(loader.calls.count == 1)
        clock.advance(by: .seconds(5))
        loader.willReturn(4)
        #expect(try await cache.value(forKey: "k", orLoad: loader.load) == 4)
        #expect(loader.calls.count == 2)
    }

    @Test func errorsAreNotCachedByDefault() async throws {
        let cache = makeLoadingCache()
        let loader = ScriptedLoader()
        loader.willThrow(LoadFailure())
        for _ in 0..<2 {
            await #expect(throws: LoadFailure.self) { try await cache.value(forKey: "k", orLoad: loader.load) }
        }
        #expect(loader.calls.count == 2)
    }

    // MARK: Ordering

    @Test func aValueLoadedWhileTheKeyWasWrittenIsNotStoredOverTheWrite() async throws {
        let cache = makeLoadingCache()
        let slow = ScriptedLoader(value: 1, held: true)
        let caller = Task { try await cache.value(forKey: "k", orLoad: slow.load) }
        try await yield { slow.gate!.waitingCount == 1 }
        cache.setValue(2, forKey: "k")
        slow.gate!.open()
        #expect(try await caller.value == 1)
        #expect(cache.value(forKey: "k") == 2)
    }

    @Test func aValueLoadedWhileTheKeyWasRemovedOrInvalidatedIsNotStored() async throws {
        let cache = makeLoadingCache()
        for change in [{ _ = cache.removeValue(forKey: "k") }, { cache.removeAll() }, { cache.invalidateValue(forKey: "k") }]
        as [@Sendable () -> Void] {
            let slow = ScriptedLoader(value: 1, held: true)
            let caller = Task { try await cache.value(forKey: "k", orLoad: slow.load) }
            try await yield { slow.gate!.waitingCount == 1 }
            change()
            slow.gate!.open()
            #expect(try await caller.value == 1)
            #expect(cache.value(forKey: "k") == nil)
        }
    }

    @Test func invalidateExpiresTheValueButKeepsItAsAFailSafe() async throws {
        let cache = makeLoadingCache(options: LoadOptions(staleIfError: .seconds(60)))
        _ = try await cache.value(forKey: "k") { _ in 1 }
        #expect(cache.invalidateValue(forKey: "k"))
        #expect(cache.value(forKey: "k") == nil)
        #expect(try await cache.value(forKey: "k") { _ in throw LoadFailure() } == 1)
        #expect(try await cache.value(forKey: "k") { _ in 2 } == 2)
        #expect(cache.value(forKey: "k") == 2)
    }

    @Test func refreshValueReloadsNowAndIgnoresACachedError() async throws {
        let cache = makeLoadingCache(options: LoadOptions(errorTTL: .seconds(60)))
        await #expect(throws: LoadFailure.self) { try await cache.value(forKey: "k") { _ in throw LoadFailure() } }
        #expect(try await cache.refreshValue(forKey: "k") { _ in 5 } == 5)
        #expect(cache.value(forKey: "k") == 5)
        #expect(try await cache.refreshValue(forKey: "k") { _ in 6 } == 6)
        #expect(cache.value(forKey: "k") == 6)
    }

    // MARK: Re-entrancy and cancellation

    @Test func aLoaderAskingForItsOwnKeyGetsAClearErrorAndOtherKeysLoad() async throws {
        let cache = makeLoadingCache()
        let outcome = await Result {
            try await cache.value(forKey: "a") { _ in try await cache.value(forKey: "a") { _ in 0 } }
        }
        #expect { try outcome.get() } throws: { StashError.Code.recursiveLoad ~= $0 }
        let nested = try await cache.value(forKey: "b") { _ in try await cache.value(forKey: "c") { _ in 2 } + 1 }
        #expect(nested == 3)
        #expect(cache.value(forKey: "c") == 2)
    }

    @Test func cancellingOneCallerLeavesTheLoadToTheOthers() async throws {
        let cache = makeLoadingCache()
        let slow = ScriptedLoader(value: 8, held: true)
        let cancelled = Task { try await cache.value(forKey: "k", orLoad: slow.load) }
        try await yield { slow.gate!.waitingCount == 1 }
        let kept = Task { try await cache.value(forKey: "k", orLoad: slow.load) }
        try await yield { cache.core.loading.coordinator.waiterCount(forKey: "k") == 2 }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        slow.gate!.open()
        #expect(try await kept.value == 8)
        #expect(cache.value(forKey: "k") == 8)
        #expect(cache.statistics.loadFailures == 0)
    }

    // MARK: Bulk

    @Test func aBulkLoaderGetsOnlyTheMissingKeys() async throws {
        let cache = makeLoadingCache()
        cache.setValue(1, forKey: "a")
        let asked = LockedValue<[Set<String>]>([])
        let values = try await cache.values(forKeys: ["a", "b", "c", "b"]) { keys in
            asked.withLock { $0.append(keys) }
            return Dictionary(uniqueKeysWithValues: keys.filter { $0 != "c" }.map { ($0, 2) })
        }
        #expect(values == ["a": 1, "b": 2])
        #expect(asked.withLock { $0 } == [["b", "c"]])
        #expect(cache.value(forKey: "b") == 2)
        #expect(cache.value(forKey: "c") == nil)
    }

    @Test func aBulkCallWaitsForAKeyAlreadyBeingLoaded() async throws {
        let cache = makeLoadingCache()
        let slow = ScriptedLoader(value: 1, held: true)
        let single = Task { try await cache.value(forKey: "a", orLoad: slow.load) }
        try await yield { slow.gate!.waitingCount == 1 }
        let asked = LockedValue<[Set<String>]>([])
        let bulk = Task {
            try await cache.values(forKeys: ["a", "b"]) { keys in
                asked.withLock { $0.append(keys) }
                return Dictionary(uniqueKeysWithValues: keys.map { ($0, 2) })
            }
        }
        try await yield { cache.value(forKey: "b") == 2 }
        slow.gate!.open()
        #expect(try await bulk.value == ["a": 1, "b": 2])
        #expect(try await single.value == 1)
        #expect(asked.withLock { $0 } == [["b"]])
    }

    @Test func aFailedBulkLoadFallsBackToStaleValues() async throws {
        let clock = ManualClock()
        let cache = makeLoadingCache(clock: clock, options: LoadOptions(ttl: .seconds(1), staleIfError: .seconds(10)))
        _ = try await cache.values(forKeys: ["a"]) { _ in ["a": 1] }
        clock.advance(by: .seconds(2))
        let values = try await cache.values(forKeys: ["a", "b"]) { _ in throw LoadFailure() }
        #expect(values == ["a": 1])
        #expect(cache.statistics.staleValuesServed == 1)
    }

    @Test func aFailedBulkLoadWithNothingToReturnThrowsTheLoadersError() async throws {
        let cache = makeLoadingCache()
        await #expect(throws: LoadFailure.self) {
            try await cache.values(forKeys: ["a", "b"]) { _ in throw LoadFailure() }
        }
        #expect(cache.statistics.loadFailures == 1)

        cache.setValue(1, forKey: "a")
        let partial = try await cache.values(forKeys: ["a", "b"]) { _ in throw LoadFailure() }
        #expect(partial == ["a": 1], "a partial answer is returned, not thrown")

        let none = try await cache.values(forKeys: ["c"]) { _ in [:] }
        #expect(none.isEmpty, "a key the loader leaves out has no value: not an error")
    }

    @Test func aBulkCallWithOnlyCachedErrorsThrowsTheCachedError() async throws {
        let cache = makeLoadingCache(options: LoadOptions(errorTTL: .seconds(30)))
        await #expect(throws: LoadFailure.self) {
            try await cache.values(forKeys: ["a"]) { _ in throw LoadFailure() }
        }
        let loads = Counter()
        await #expect(throws: LoadFailure.self) {
            try await cache.values(forKeys: ["a"]) { _ in
                loads.increment()
                return ["a": 1]
            }
        }
        #expect(loads.count == 0, "the cached error answers without loading")
    }
}
