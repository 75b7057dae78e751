import HTTPTypes
import Stash
import StashTestSupport
import Testing
@testable import StashHTTP

@Suite(.timeLimit(.minutes(5))) struct HTTPCacheConcurrencyTests {
    /// An origin whose answers wait for `latch`, counting calls.
    final class SlowOrigin: @unchecked Sendable {
        // @unchecked Sendable: `calls` is only touched with `lock` held.
        let latch = TestGate()
        private let lock = Lock()
        private var calls = 0
        let fields: [(String, String)]
        let status: Int
        init(status: Int = 200, fields: [(String, String)]) {
            self.fields = fields
            self.status = status
        }
        var count: Int { lock.withLock { calls } }
        var closure: @Sendable (HTTPRequest, HTTPCacheBody?) async throws -> (HTTPResponse, HTTPCacheBody) {
            { _, _ in
                self.lock.withLock { self.calls += 1 }
                try await self.latch.wait()
                return (makeResponse(self.status, self.fields), HTTPCacheBody(bytes: Array("body".utf8)))
            }
        }
    }

    @Test func concurrentMissesShareOneOriginRequest() async throws {
        let cache = try makeCache(clock: makeClock())
        let origin = SlowOrigin(fields: [("Cache-Control", "max-age=60")])
        let key = HTTPCacheEngine.key(for: makeRequest())
        let callers = 8
        try await withThrowingTaskGroup(of: (HTTPCacheOutcome, String).self) { group in
            for _ in 0..<callers {
                group.addTask {
                    let result = try await cache.response(for: makeRequest(), origin: origin.closure)
                    return (result.outcome, String(decoding: try await result.body.collect(upTo: 100), as: UTF8.self))
                }
            }
            try await yield(until: { origin.count == 1 && cache.engine.waiterCount(forKey: key) == callers - 1 }, onTimeout: origin.latch.open)
            origin.latch.open()
            var outcomes: [HTTPCacheOutcome] = []
            for try await (outcome, body) in group {
                #expect(body == "body")
                outcomes.append(outcome)
            }
            #expect(outcomes.filter { $0 == .miss }.count == 1)
            #expect(outcomes.filter { $0 == .hit }.count == callers - 1)
        }
        #expect(origin.count == 1)
    }

    @Test func waitersOfAnUncacheableResponseAskTheOriginThemselves() async throws {
        let cache = try makeCache(clock: makeClock())
        let origin = SlowOrigin(fields: [("Cache-Control", "no-store")])
        let key = HTTPCacheEngine.key(for: makeRequest())
        try await withThrowingTaskGroup(of: HTTPCacheOutcome.self) { group in
            for _ in 0..<3 {
                group.addTask { try await cache.response(for: makeRequest(), origin: origin.closure).outcome }
            }
            try await yield(until: { origin.count == 1 && cache.engine.waiterCount(forKey: key) == 2 }, onTimeout: origin.latch.open)
            origin.latch.open()
            for try await outcome in group { #expect(outcome == .miss) }
        }
        #expect(origin.count == 3)
    }

    /// A caller cancelled while it waits for another's origin request gives up at once with
    /// `CancellationError`, without asking the origin itself; the request under way goes on.
    @Test func aCancelledWaiterGivesUpWithoutAskingTheOrigin() async throws {
        let cache = try makeCache(clock: makeClock())
        let origin = SlowOrigin(fields: [("Cache-Control", "max-age=60")])
        let key = HTTPCacheEngine.key(for: makeRequest())
        let fetcher = Task { try await cache.response(for: makeRequest(), origin: origin.closure).outcome }
        try await yield(until: { origin.count == 1 }, onTimeout: origin.latch.open)
        let waiter = Task { try await cache.response(for: makeRequest(), origin: origin.closure).outcome }
        try await yield(until: { cache.engine.waiterCount(forKey: key) == 1 }, onTimeout: origin.latch.open)
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(origin.count == 1)
        origin.latch.open()
        #expect(try await fetcher.value == .miss)
        #expect(origin.count == 1)
    }

    @Test func concurrentRevalidationsShareOneOriginRequest() async throws {
        let clock = makeClock()
        let cache = try makeCache(clock: clock)
        let first = TestOrigin(200, [("Cache-Control", "max-age=10"), ("ETag", "\"1\"")])
        _ = try await cache.get(makeRequest(), first)
        clock.advance(by: .seconds(20))
        let origin = SlowOrigin(status: 304, fields: [("Cache-Control", "max-age=10")])
        let key = HTTPCacheEngine.key(for: makeRequest())
        try await withThrowingTaskGroup(of: HTTPCacheOutcome.self) { group in
            for _ in 0..<4 {
                group.addTask { try await cache.response(for: makeRequest(), origin: origin.closure).outcome }
            }
            try await yield(until: { origin.count == 1 && cache.engine.waiterCount(forKey: key) == 3 }, onTimeout: origin.latch.open)
            origin.latch.open()
            var outcomes: [HTTPCacheOutcome] = []
            for try await outcome in group { outcomes.append(outcome) }
            #expect(outcomes.filter { $0 == .revalidated }.count == 1)
            #expect(outcomes.filter { $0 == .hit }.count == 3)
        }
        #expect(origin.count == 1)
    }

    @Test func staleWhileRevalidateStartsOneBackgroundRequestPerEntry() async throws {
        let clock = makeClock()
        let cache = try makeCache(clock: clock)
        let first = TestOrigin(200, [("Cache-Control", "max-age=10, stale-while-revalidate=60")])
        _ = try await cache.get(makeRequest(), first)
        clock.advance(by: .seconds(20))
        let origin = SlowOrigin(fields: [("Cache-Control", "max-age=10")])
        try await withThrowingTaskGroup(of: HTTPCacheOutcome.self) { group in
            for _ in 0..<6 {
                group.addTask { try await cache.response(for: makeRequest(), origin: origin.closure).outcome }
            }
            for try await outcome in group { #expect(outcome == .stale) }
        }
        origin.latch.open()
        await cache.engine.waitForBackgroundRevalidations()
        #expect(origin.count == 1)
        #expect(try await cache.get(makeRequest(), first).0.outcome == .hit)
    }

    @Test func manyKeysFromManyTasksKeepTheStoreConsistent() async throws {
        let cache = try makeCache(clock: makeClock()) { $0.memoryCountLimit = 16 }
        let origin = TestOrigin { request in
            (makeResponse(200, [("Cache-Control", "max-age=60")]), HTTPCacheBody(bytes: Array((request.path ?? "").utf8)))
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var generator = SeededGenerator(seed: UInt64(task))
                    for _ in 0..<200 {
                        let path = "/\(generator.next() % 40)"
                        let (_, body) = try await cache.get(makeRequest(path), origin)
                        #expect(body == path)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(cache.engine.memory.count <= 16)
    }
}
