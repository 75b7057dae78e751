import StashTestSupport
import Testing
@testable import Stash

/// A memory and disk `Cache` of strings in `directory`, both tiers on `clock`.
private func makeCache(
    _ directory: TemporaryDirectory, clock: ManualClock, options: LoadOptions = LoadOptions()
) throws -> Cache<String> {
    let memory = makeMemoryCache(String.self, String.self, clock: clock)
    let disk = try makeDiskCache(directory, codec: .string, clock: clock)
    return try Cache(memory: memory, disk: disk, loadOptions: options)
}

@Suite(.timeLimit(.minutes(5))) struct CacheLoadingTests {

    /// A bulk read takes the disk tier's queue in chunks (``Cache/bulkDiskChunk`` keys at a time),
    /// and finds every key on disk without loading.
    @Test func aBulkReadFindsEveryKeyOnDiskAcrossChunks() async throws {
        try await withTemporaryDirectory { directory in
            let clock = ManualClock()
            let cache = try makeCache(directory, clock: clock)
            let keys = (0..<(CacheCore<String>.bulkDiskChunk * 2 + 5)).map { "k\($0)" }
            for key in keys { try await cache.setValue("v-\(key)", forKey: key) }
            cache.memory?.removeAll()
            let loads = LockedValue(0)
            let values = try await cache.values(forKeys: keys) { missing in
                loads.withLock { $0 += missing.count }
                return [:]
            }
            #expect(values.count == keys.count)
            #expect(values["k200"] == "v-k200")
            #expect(loads.withLock { $0 } == 0)
            #expect(cache.memory?.value(forKey: "k7") == "v-k7", "promoted")
        }
    }

    /// Without a disk or remote tier, a bulk read checks no key against the disk tier's rules,
    /// as a single read does not.
    @Test func aMemoryOnlyBulkReadTakesAnyKey() async throws {
        let cache = try Cache<String>(memory: MemoryCache(), disk: nil)
        let values = try await cache.values(forKeys: ["", "a"]) { keys in
            Dictionary(uniqueKeysWithValues: keys.map { ($0, "loaded") })
        }
        #expect(values == ["": "loaded", "a": "loaded"])
    }

    @Test func aMissLoadsOnceAndWritesBothTiers() async throws {
        try await withTemporaryDirectory { directory in
            let cache = try makeCache(directory, clock: ManualClock(start: 1_700_000_000_000_000_000))
            let loads = Counter()
            let value = try await cache.value(forKey: "k") { key in
                loads.increment()
                return "loaded \(key)"
            }
            #expect(value == "loaded k")
            #expect(cache.memory?.value(forKey: "k") == "loaded k")
            #expect(try await cache.disk?.value(forKey: "k") == "loaded k")
            #expect(try await cache.value(forKey: "k") { _ in "again" } == "loaded k")
            #expect(loads.count == 1)
            #expect(cache.statistics.loadSuccesses == 1)
        }
    }

    @Test func theLoaderExpressionIsNotEvaluatedOnAMemoryHit() async throws {
        try await withTemporaryDirectory { directory in
            let cache = try makeCache(directory, clock: ManualClock(start: 1_700_000_000_000_000_000))
            var formed = 0
            func makeLoader() -> @Sendable (String) async throws -> String {
                formed += 1
                return { key in "loaded \(key)" }
            }
            #expect(try await cache.value(forKey: "k", orLoad: makeLoader()) == "loaded k")
            #expect(try await cache.value(forKey: "k", orLoad: makeLoader()) == "loaded k")
            #expect(formed == 1)
        }
    }

    @Test func aDiskHitIsPromotedWithoutLoading() async throws {
        try await withTemporaryDirectory { directory in
            let cache = try makeCache(directory, clock: ManualClock(start: 1_700_000_000_000_000_000))
            try await cache.disk?.setValue("on disk", forKey: "k")
            #expect(try await cache.value(forKey: "k") { _ in Issue.record("loaded"); return "" } == "on disk")
            #expect(cache.memory?.value(forKey: "k") == "on disk")
        }
    }

    @Test func aFailingLoadServesTheMemoryTiersStaleCopyWithinItsGrace() async throws {
        try await withTemporaryDirectory { directory in
            let clock = ManualClock(start: 1_700_000_000_000_000_000)
            let cache = try makeCache(
                directory, clock: clock, options: LoadOptions(ttl: .seconds(10), staleIfError: .seconds(20)))
            _ = try await cache.value(forKey: "k") { _ in "v1" }
            clock.advance(by: .seconds(11))
            #expect(try await cache.value(forKey: "k") == nil)
            #expect(try await cache.value(forKey: "k") { _ in throw LoadFailure() } == "v1")
            clock.advance(by: .seconds(20))
            await #expect(throws: LoadFailure.self) { try await cache.value(forKey: "k") { _ in throw LoadFailure() } }
            #expect(cache.statistics.staleValuesServed == 1)
        }
    }

    @Test func aWriteDuringALoadWinsInBothTiers() async throws {
        try await withTemporaryDirectory { directory in
            let cache = try makeCache(directory, clock: ManualClock(start: 1_700_000_000_000_000_000))
            let gate = TestGate()
            let started = TestGate()
            let caller = Task {
                try await cache.value(forKey: "k") { _ in
                    started.open()
                    try await gate.wait()
                    return "loaded"
                }
            }
            try await started.wait()
            try await cache.setValue("written", forKey: "k")
            gate.open()
            #expect(try await caller.value == "loaded")
            #expect(cache.memory?.value(forKey: "k") == "written")
            #expect(try await cache.disk?.value(forKey: "k") == "written")
        }
    }

    @Test func invalidateRemovesTheDiskCopyAndKeepsTheMemoryFailSafe() async throws {
        try await withTemporaryDirectory { directory in
            let cache = try makeCache(
                directory, clock: ManualClock(start: 1_700_000_000_000_000_000),
                options: LoadOptions(staleIfError: .seconds(60)))
            _ = try await cache.value(forKey: "k") { _ in "v1" }
            #expect(try await cache.invalidateValue(forKey: "k"))
            #expect(try await cache.disk?.value(forKey: "k") == nil)
            #expect(try await cache.value(forKey: "k") == nil)
            #expect(try await cache.value(forKey: "k") { _ in throw LoadFailure() } == "v1")
            #expect(try await cache.value(forKey: "k") { _ in "v2" } == "v2")
            #expect(try await cache.disk?.value(forKey: "k") == "v2")
        }
    }

    @Test func aBulkLoaderGetsOnlyKeysNeitherTierHolds() async throws {
        try await withTemporaryDirectory { directory in
            let cache = try makeCache(directory, clock: ManualClock(start: 1_700_000_000_000_000_000))
            try await cache.setValue("m", forKey: "inMemory")
            try await cache.disk?.setValue("d", forKey: "onDisk")
            let asked = LockedValue<[Set<String>]>([])
            let values = try await cache.values(forKeys: ["inMemory", "onDisk", "new"]) { keys in
                asked.withLock { $0.append(keys) }
                return ["new": "n"]
            }
            #expect(values == ["inMemory": "m", "onDisk": "d", "new": "n"])
            #expect(asked.withLock { $0 } == [["new"]])
            #expect(try await cache.disk?.value(forKey: "new") == "n")
        }
    }

    @Test func aHitPastRefreshAfterReturnsTheOldValueAndOneReloadRewritesBothTiers() async throws {
        try await withTemporaryDirectory { directory in
            let clock = ManualClock(start: 1_700_000_000_000_000_000)
            let cache = try makeCache(
                directory, clock: clock, options: LoadOptions(ttl: .seconds(60), refreshAfter: .seconds(45)))
            _ = try await cache.value(forKey: "k") { _ in "v1" }
            clock.advance(by: .seconds(45))
            let gate = TestGate()
            let reloads = Counter()
            let reload: @Sendable (String) async throws -> String = { _ in
                reloads.increment()
                try await gate.wait()
                return "v2"
            }
            for _ in 0..<3 {
                #expect(try await cache.value(forKey: "k", orLoad: reload) == "v1", "the old value, at once")
            }
            try await yield { gate.waitingCount == 1 }
            gate.open()
            try await yield { cache.memory?.value(forKey: "k") == "v2" }
            #expect(try await cache.disk?.value(forKey: "k") == "v2")
            #expect(reloads.count == 1)
            #expect(cache.statistics.refreshes == 1)
        }
    }

    @Test func aSoftTimeoutServesTheStaleCopyAndTheLateLoadReachesBothTiers() async throws {
        try await withTemporaryDirectory { directory in
            let clock = ManualClock(start: 1_700_000_000_000_000_000)
            let cache = try makeCache(
                directory, clock: clock,
                options: LoadOptions(ttl: .seconds(10), staleIfError: .seconds(60), softTimeout: .seconds(1)))
            _ = try await cache.value(forKey: "k") { _ in "v1" }
            clock.advance(by: .seconds(10))
            let gate = TestGate()
            let caller = Task {
                try await cache.value(forKey: "k") { _ in
                    try await gate.wait()
                    return "v2"
                }
            }
            try await yield { clock.sleeperCount == 1 && gate.waitingCount == 1 }
            clock.advance(by: .seconds(1))
            #expect(try await caller.value == "v1")
            gate.open()
            try await yield { cache.memory?.value(forKey: "k") == "v2" }
            #expect(try await cache.disk?.value(forKey: "k") == "v2")
            #expect(cache.statistics.staleValuesServed == 1)
        }
    }

    @Test func aLoaderAskingTheCacheForItsOwnKeyGetsAClearError() async throws {
        try await withTemporaryDirectory { directory in
            let cache = try makeCache(directory, clock: ManualClock(start: 1_700_000_000_000_000_000))
            let outcome = await Result {
                try await cache.value(forKey: "a") { _ in try await cache.value(forKey: "a") { _ in "inner" } }
            }
            #expect { try outcome.get() } throws: { StashError.Code.recursiveLoad ~= $0 }
            let nested = try await cache.value(forKey: "b") { _ in try await cache.value(forKey: "c") { _ in "c" } + "b" }
            #expect(nested == "cb")
            #expect(try await cache.disk?.value(forKey: "c") == "c")
        }
    }

    @Test func aFailedBulkLoadWithNothingToReturnThrows() async throws {
        try await withTemporaryDirectory { directory in
            let cache = try makeCache(directory, clock: ManualClock(start: 1_700_000_000_000_000_000))
            await #expect(throws: LoadFailure.self) {
                try await cache.values(forKeys: ["a", "b"]) { _ in throw LoadFailure() }
            }
            try await cache.disk?.setValue("d", forKey: "a")
            #expect(try await cache.values(forKeys: ["a", "b"]) { _ in throw LoadFailure() } == ["a": "d"])
        }
    }

    @Test func refreshValueRewritesBothTiers() async throws {
        try await withTemporaryDirectory { directory in
            let cache = try makeCache(directory, clock: ManualClock(start: 1_700_000_000_000_000_000))
            try await cache.setValue("old", forKey: "k")
            #expect(try await cache.refreshValue(forKey: "k") { _ in "new" } == "new")
            #expect(cache.memory?.value(forKey: "k") == "new")
            #expect(try await cache.disk?.value(forKey: "k") == "new")
        }
    }
}

@Suite(.timeLimit(.minutes(5))) struct CacheLoadingConcurrencyTests {
    @Test func aThousandCallersShareOneLoadThroughBothTiers() async throws {
        try await withTemporaryDirectory { directory in
            let cache = try makeCache(directory, clock: ManualClock(start: 1_700_000_000_000_000_000))
            let gate = TestGate()
            let loads = Counter()
            try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<1_000 {
                    group.addTask {
                        try await cache.value(forKey: "hot") { _ in
                            loads.increment()
                            try await gate.wait()
                            return "v"
                        }
                    }
                }
                try await yield(
                    until: { cache.core.loading.coordinator.waiterCount(forKey: "hot") == 1_000 }, onTimeout: gate.open)
                gate.open()
                for try await value in group { #expect(value == "v") }
            }
            #expect(loads.count == 1)
            #expect(try await cache.disk?.value(forKey: "hot") == "v")
        }
    }

    @Test func aThousandCallersShareOneFailingLoadAndNeitherTierStoresIt() async throws {
        try await withTemporaryDirectory { directory in
            let cache = try makeCache(directory, clock: ManualClock(start: 1_700_000_000_000_000_000))
            let gate = TestGate()
            let loads = Counter()
            let failures = Counter()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<1_000 {
                    group.addTask {
                        do {
                            _ = try await cache.value(forKey: "hot") { _ -> String in
                                loads.increment()
                                try await gate.wait()
                                throw LoadFailure()
                            }
                        } catch is LoadFailure {
                            failures.increment()
                        } catch {
                            Issue.record("unexpected \(error)")
                        }
                    }
                }
                try await yield(
                    until: { cache.core.loading.coordinator.waiterCount(forKey: "hot") == 1_000 }, onTimeout: gate.open)
                gate.open()
            }
            #expect(loads.count == 1)
            #expect(failures.count == 1_000)
            #expect(cache.memory?.value(forKey: "hot") == nil)
            #expect(try await cache.disk?.value(forKey: "hot") == nil)
            #expect(cache.statistics.loadFailures == 1)
        }
    }
}
