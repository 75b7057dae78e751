import Testing
@testable import Stash

@Suite struct CacheLoadingTests {
    private func makeCache(
        _ directory: TemporaryDirectory, clock: ManualClock, options: LoadOptions = LoadOptions()
    ) throws -> Cache<String> {
        let memory = makeMemoryCache(String.self, String.self, clock: clock)
        let disk = try makeDiskCache(directory, codec: .string, clock: clock)
        return try Cache(memory: memory, disk: disk, loadOptions: options)
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
            let gate = AsyncGate()
            let started = AsyncGate()
            let caller = Task {
                try await cache.value(forKey: "k") { _ in
                    started.open()
                    await gate.wait()
                    return "loaded"
                }
            }
            await started.wait()
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

@Suite struct CacheLoadingConcurrencyTests {
    @Test func aThousandCallersShareOneLoadThroughBothTiers() async throws {
        try await withTemporaryDirectory { directory in
            let clock = ManualClock(start: 1_700_000_000_000_000_000)
            let memory = makeMemoryCache(String.self, String.self, clock: clock)
            let disk = try makeDiskCache(directory, codec: .string, clock: clock)
            let cache = try Cache(memory: memory, disk: disk)
            let gate = AsyncGate()
            let loads = Counter()
            try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<1_000 {
                    group.addTask {
                        try await cache.value(forKey: "hot") { _ in
                            loads.increment()
                            await gate.wait()
                            return "v"
                        }
                    }
                }
                await yield { cache.loading.coordinator.waiterCount(forKey: "hot") == 1_000 }
                gate.open()
                for try await value in group { #expect(value == "v") }
            }
            #expect(loads.count == 1)
            #expect(try await cache.disk?.value(forKey: "hot") == "v")
        }
    }
}
