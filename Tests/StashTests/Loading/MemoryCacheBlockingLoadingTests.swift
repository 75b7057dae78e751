import Dispatch
import Foundation
import Testing
@testable import Stash

@Suite(.timeLimit(.minutes(5))) struct MemoryCacheBlockingLoadingTests {
    @Test func aMissLoadsOnTheCallingThreadAndTheNextCallHits() throws {
        let cache = makeLoadingCache()
        let loads = Counter()
        let load: @Sendable (String) throws -> Int = { _ in
            loads.increment()
            return 4
        }
        #expect(try cache.blockingValue(forKey: "k", orLoad: load) == 4)
        #expect(try cache.blockingValue(forKey: "k", orLoad: load) == 4)
        #expect(loads.count == 1)
        #expect(cache.statistics.loadSuccesses == 1)
    }

    @Test func theLoaderExpressionIsEvaluatedOnlyOnAMiss() throws {
        let cache = makeLoadingCache()
        var formed = 0
        func makeLoader() -> @Sendable (String) throws -> Int {
            formed += 1
            return { _ in 4 }
        }
        #expect(try cache.blockingValue(forKey: "k", orLoad: makeLoader()) == 4)
        #expect(try cache.blockingValue(forKey: "k", orLoad: makeLoader()) == 4)
        #expect(formed == 1)
    }

    @Test func aFailingLoadReturnsTheStaleValueWithinItsGrace() throws {
        let clock = ManualClock()
        let cache = makeLoadingCache(clock: clock, options: LoadOptions(ttl: .seconds(1), staleIfError: .seconds(5)))
        let succeed: @Sendable (String) throws -> Int = { _ in 1 }
        let fail: @Sendable (String) throws -> Int = { _ in throw LoadFailure() }
        _ = try cache.blockingValue(forKey: "k", orLoad: succeed)
        clock.advance(by: .seconds(2))
        #expect(try cache.blockingValue(forKey: "k", orLoad: fail) == 1)
        clock.advance(by: .seconds(5))
        #expect(throws: LoadFailure.self) { try cache.blockingValue(forKey: "k", orLoad: fail) }
        #expect(cache.statistics.staleValuesServed == 1)
    }

    @Test func aLoaderAskingForItsOwnKeyOnItsThreadGetsAnError() throws {
        let cache = makeLoadingCache()
        let outcome = Result {
            try cache.blockingValue(forKey: "a", orLoad: { @Sendable _ in
                try cache.blockingValue(forKey: "a", orLoad: { @Sendable _ in 0 })
            })
        }
        #expect { try outcome.get() } throws: { StashError.Code.recursiveLoad ~= $0 }
    }
}

@Suite(.timeLimit(.minutes(5))) struct MemoryCacheBlockingLoadingConcurrencyTests {
    @Test func threadsMissingTogetherShareOneLoad() throws {
        let cache = makeLoadingCache()
        let loads = Counter()
        let release = DispatchSemaphore(value: 0)
        let threads = 8
        let arrived = Counter()
        let results = LockedValue<[Int]>([])
        let load: @Sendable (String) throws -> Int = { _ in
            loads.increment()
            release.wait()
            return 9
        }
        // Threads of their own: the dispatch pool may run fewer blocked blocks than this at once.
        let group = DispatchGroup()
        for _ in 0..<threads {
            group.enter()
            Thread.detachNewThread {
                arrived.increment()
                if let value = try? cache.blockingValue(forKey: "hot", orLoad: load) {
                    results.withLock { $0.append(value) }
                }
                group.leave()
            }
        }
        // The leader is inside the loader; the others block on its flight.
        do {
            try spin { loads.count > 0 && cache.core.loading.blockingFlights.withLock({ $0.count }) > 0 }
            try spin { arrived.count == threads }
        } catch {
            release.signal()  // no thread stays blocked behind a failed test
            throw error
        }
        release.signal()
        try #require(group.wait(timeout: .now() + .seconds(60)) == .success)
        #expect(results.withLock { $0 } == Array(repeating: 9, count: threads))
        #expect(loads.count == 1)
    }
}
