import Testing
@testable import Stash

@Suite(.timeLimit(.minutes(5))) struct MemoryCacheLoadingConcurrencyTests {
    @Test func aThousandCallersForOneMissingKeyShareOneLoad() async throws {
        let cache = makeLoadingCache()
        let loader = ScriptedLoader(value: 42, held: true)
        let callers = 1_000
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<callers {
                group.addTask { try await cache.value(forKey: "hot", orLoad: loader.load) }
            }
            try await yield(
                until: { cache.core.loading.coordinator.waiterCount(forKey: "hot") == callers },
                onTimeout: loader.gate!.open)
            loader.gate!.open()
            var answers = 0
            for try await value in group {
                #expect(value == 42)
                answers += 1
            }
            #expect(answers == callers)
        }
        #expect(loader.calls.count == 1)
        #expect(cache.value(forKey: "hot") == 42)
    }

    @Test func aThousandCallersShareOneFailingLoadAndNothingIsStored() async throws {
        let cache = makeLoadingCache()
        let loader = ScriptedLoader(held: true)
        loader.willThrow(LoadFailure())
        let callers = 1_000
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<callers {
                group.addTask {
                    do {
                        _ = try await cache.value(forKey: "hot", orLoad: loader.load)
                        return false
                    } catch {
                        return error is LoadFailure
                    }
                }
            }
            try await yield(
                until: { cache.core.loading.coordinator.waiterCount(forKey: "hot") == callers },
                onTimeout: loader.gate!.open)
            loader.gate!.open()
            var failures = 0
            for try await failed in group where failed { failures += 1 }
            #expect(failures == callers)
        }
        #expect(loader.calls.count == 1)
        #expect(cache.count == 0)
        #expect(cache.statistics.loadFailures == 1)
    }

    @Test func loadsWritesAndInvalidationsFromManyTasksKeepTheCacheConsistent() async throws {
        let cache = makeLoadingCache(options: LoadOptions(staleIfError: .seconds(60)), countLimit: 32)
        let loads = Counter()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<16 {
                group.addTask {
                    var generator = SeededGenerator(seed: UInt64(task))
                    for _ in 0..<300 {
                        let key = "k\(generator.next() % 48)"
                        switch generator.next() % 8 {
                        case 0: cache.setValue(Int(generator.next() % 100), forKey: key)
                        case 1: cache.invalidateValue(forKey: key)
                        case 2: _ = cache.removeValue(forKey: key)
                        case 3:
                            _ = try await cache.values(forKeys: [key, "k\(generator.next() % 48)"]) { keys in
                                loads.increment()
                                return Dictionary(uniqueKeysWithValues: keys.map { ($0, 1) })
                            }
                        default:
                            _ = try await cache.value(forKey: key) { _ in
                                loads.increment()
                                await Task.yield()
                                return 1
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(cache.count <= 32)
        cache.core.checkInvariants()
        #expect(loads.count > 0)
    }
}
