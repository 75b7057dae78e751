#if Redis
import Foundation
import Logging
import NIOCore
#if ServiceLifecycle
import ServiceLifecycle
#endif
import StashTestSupport
import XCTest
@testable import Stash
@testable import StashRedis

/// `Cache` with memory, disk and Redis tiers: two instances sharing one real
/// redis-server, each seeing the other's writes and invalidations.
final class CacheWithRedisTests: XCTestCase {
    private var server: RedisServerProcess!
    private var caches: SharedRedisCaches!

    override func setUpWithError() throws {
        try RedisRequirement.requireServer()
        server = try RedisServerProcess.start()
        caches = SharedRedisCaches(server: server, prefix: "shared:")
    }

    override func tearDown() async throws {
        await caches?.close()
        server?.stop()
    }

    /// A cache on its own directory, sharing the test's Redis under one prefix.
    private func makeCache(memory: Bool = true, disk: Bool = true, logger: Logger = Logger(label: "test")) throws -> Cache<String> {
        try caches.make(memory: memory, disk: disk, logger: logger)
    }

    private func redisCalls(_ command: String) throws -> Int {
        try server.calls(of: command)
    }

    func testTwoInstancesSeeEachOthersWritesAndInvalidations() async throws {
        let a = try makeCache(), b = try makeCache()
        await a.waitUntilReceivingInvalidations()
        await b.waitUntilReceivingInvalidations()
        let appliedByA = a.recordAppliedInvalidations(), appliedByB = b.recordAppliedInvalidations()

        // Given A writes, when B reads, then B gets A's value from Redis and
        // promotes it into its memory and disk tiers with the remaining time to live.
        try await a.setValue("v1", forKey: "k", ttl: .seconds(60))
        // (B hears of the write too; a read racing with that would rightly skip its promotion.)
        await fulfillment(of: [appliedByB.expectation(for: .key("k"))], timeout: defaultWaitTimeoutSeconds)
        let first = try await b.value(forKey: "k")
        XCTAssertEqual(first, "v1")
        XCTAssertEqual(b.memory?.value(forKey: "k"), "v1")
        let promoted = try XCTUnwrap(try b.disk?.valueWithMetadata(forKey: "k"))
        let remaining = try XCTUnwrap(promoted.expiration) - b.disk!.nanosecondsNow
        XCTAssertGreaterThan(remaining, 50_000_000_000)
        XCTAssertLessThanOrEqual(remaining, 60_000_000_000)

        // When A writes again, then B drops its memory and disk copies and reads the new value.
        try await a.setValue("v2", forKey: "k", ttl: .seconds(60))
        await fulfillment(of: [appliedByB.expectation(for: .key("k"), occurrence: 2)], timeout: defaultWaitTimeoutSeconds)
        XCTAssertNil(b.memory?.value(forKey: "k"))
        let onDiskB = try await b.disk?.contains("k")
        XCTAssertEqual(onDiskB, false)
        let second = try await b.value(forKey: "k")
        XCTAssertEqual(second, "v2")

        // When B removes it, then A drops it everywhere, and neither finds it.
        let removed = try await b.removeValue(forKey: "k")
        XCTAssertTrue(removed)
        await fulfillment(of: [appliedByA.expectation(for: .key("k"))], timeout: defaultWaitTimeoutSeconds)
        XCTAssertNil(a.memory?.value(forKey: "k"))
        let onDiskA = try await a.disk?.contains("k")
        XCTAssertEqual(onDiskA, false)
        let afterRemoval = try await a.value(forKey: "k")
        XCTAssertNil(afterRemoval)

        // When A empties itself, then B drops everything too.
        try await b.setValue("x", forKey: "other")
        try await a.removeAll()
        await fulfillment(of: [appliedByB.expectation(for: .all)], timeout: defaultWaitTimeoutSeconds)
        XCTAssertEqual(b.memory?.count, 0)
        let otherOnDisk = try await b.disk?.contains("other")
        XCTAssertEqual(otherOnDisk, false)
        let afterRemoveAll = try await b.value(forKey: "other")
        XCTAssertNil(afterRemoveAll)
        // An instance never hears its own changes.
        XCTAssertFalse(appliedByA.received.contains(.all))
    }

    func testALocalMemoryHitMakesNoNetworkCall() async throws {
        let cache = try makeCache()
        try await cache.setValue("v", forKey: "hot")
        let gets = try redisCalls("get")
        for _ in 0..<100 {
            let hit = try await cache.value(forKey: "hot")
            XCTAssertEqual(hit, "v")
        }
        XCTAssertEqual(try redisCalls("get"), gets, "memory hits never reach Redis")
    }

    func testEveryTierSubsetReadsAndWritesThroughRedis() async throws {
        let writer = try makeCache()
        for (memory, disk) in [(true, false), (false, true), (false, false)] {
            let cache = try makeCache(memory: memory, disk: disk)
            try await writer.setValue("from writer \(memory) \(disk)", forKey: "subset")
            let read = try await cache.value(forKey: "subset")
            XCTAssertEqual(read, "from writer \(memory) \(disk)")
            try await cache.setValue("mine", forKey: "own")
            let back = try await writer.value(forKey: "own")
            XCTAssertEqual(back, "mine")
            try await writer.removeValue(forKey: "own")
        }
    }

    /// Many quick writes of one key, from the synchronous API (sent in the
    /// background) and the async one: Redis ends with the last local write.
    func testChangesOfOneKeyReachRedisInTheirLocalOrder() async throws {
        let cache = try makeCache()
        let reader = try makeCache(memory: false, disk: false)
        try writeSynchronously(cache, count: 300)
        try await cache.setValue("last", forKey: "ordered")
        let shared = try await reader.value(forKey: "ordered")
        XCTAssertEqual(shared, "last")
        XCTAssertEqual(cache.remoteLink?.order.keysInFlight, [])
    }

    /// `close` waits for the changes the synchronous API sends to Redis in the background: once
    /// it returns, every one of them is in Redis, and the memory and disk tiers are closed.
    func testClosingWaitsForTheChangesOnTheirWayToRedis() async throws {
        let cache = try makeCache()
        let reader = try makeCache(memory: false, disk: false)
        try writeDistinctKeysSynchronously(cache, count: 200)
        await cache.close()
        XCTAssertEqual(cache.background.count, 0)
        for index in 0..<200 {
            let shared = try await reader.value(forKey: "close-\(index)")
            XCTAssertEqual(shared, "v\(index)")
        }
        XCTAssertNil(cache.memory?.autoTrimInterval)
        do {
            _ = try await cache.disk?.value(forKey: "close-0")
            XCTFail("the disk tier answered after close")
        } catch {
            XCTAssertEqual(error.code, .closed)
        }
    }

    /// A burst of synchronous writes while Redis does not answer (SIGSTOP) holds at most the
    /// limit of sends under way; the keys past it are marked stale in their order, and once Redis
    /// answers again each key there holds this instance's last write or nothing (the repair
    /// removed it), never an older value; every write is kept locally.
    func testABurstUnderAStalledRedisHoldsBoundedSendsAndLosesNothing() async throws {
        let logs = LogRecorder()
        // Memory only: the burst takes microseconds, well within the command timeout, so no send
        // fails (and frees its place) before the count is read.
        let cache = try makeCache(disk: false, logger: logs.logger)
        let reader = try makeCache(memory: false, disk: false)
        cache.remoteLink?.maximumPendingSends = 50
        await cache.waitUntilReceivingInvalidations()
        let applied = cache.recordAppliedInvalidations()
        try await reader.setValue("old", forKey: "close-199")  // an older shared copy to be removed
        // Heard before the burst, so that it does not remove this instance's own later write.
        try await yield(until: { applied.received.contains(.key("close-199")) })
        server.pause()
        try writeDistinctKeysSynchronously(cache, count: 200)
        XCTAssertEqual(cache.remoteLink?.pendingSendCount, 50)
        XCTAssertLessThanOrEqual(cache.background.count, 51, "the sends, and at most one repair")
        server.resume()
        await cache.close()
        for index in 0..<200 {
            let local = cache.memory?.value(forKey: "close-\(index)")
            XCTAssertEqual(local, "v\(index)")
            let shared = try await reader.value(forKey: "close-\(index)")
            XCTAssertTrue(shared == nil || shared == "v\(index)", "close-\(index) holds \(shared ?? "nil") in Redis")
        }
        XCTAssertEqual(logs.messages(at: .warning).filter { $0.contains("slower than the writes") }.count, 1)
    }

    #if ServiceLifecycle
    /// A client, its tier and a cache in one group, listed in the order the docs give: on graceful
    /// shutdown the cache's last changes reach Redis, then the tier and the client close.
    func testAServiceGroupClosesTheCacheThenTheTierThenTheClient() async throws {
        let client = RedisClient(configuration: RedisConfiguration(host: "127.0.0.1", port: server.port))
        let tier = RedisCacheTier(executor: client, codec: .string, configuration: .init(keyPrefix: "shared:"))
        let cache = try Cache<String>(memory: MemoryCache(), disk: nil, remote: tier)
        let reader = try makeCache(memory: false, disk: false)
        let started = StartedService()
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: client), .init(service: tier), .init(service: cache), .init(service: started)],
            logger: Logger(label: "test")))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            for await _ in started.running { break }
            try writeDistinctKeysSynchronously(cache, count: 50)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        let last = try await reader.value(forKey: "close-49")
        XCTAssertEqual(last, "v49")
        do {
            _ = try await client.get("shared:close-0")
            XCTFail("the client answered after the group shut down")
        } catch {
            XCTAssertEqual(error.code, .connectionClosed)
        }
    }

    /// A service that says when the group runs it, so that the test triggers the shutdown with
    /// every service running.
    private struct StartedService: Service {
        let running: AsyncStream<Void>
        let runs: AsyncStream<Void>.Continuation

        init() {
            (running, runs) = AsyncStream<Void>.makeStream()
        }

        func run() async throws {
            runs.yield()
            try? await gracefulShutdown()
        }
    }
    #endif

    private func writeDistinctKeysSynchronously(_ cache: Cache<String>, count: Int) throws {
        for index in 0..<count { try cache.setValue("v\(index)", forKey: "close-\(index)") }
    }

    /// The synchronous API, which sends to Redis in the background.
    private func writeSynchronously(_ cache: Cache<String>, count: Int) throws {
        for index in 0..<count {
            if index % 3 == 0 {
                try cache.removeValue(forKey: "ordered")
            } else {
                try cache.setValue("v\(index)", forKey: "ordered")
            }
        }
    }

    /// Two instances, 50 concurrent insertions of one key each: one wins across the fleet (Redis
    /// `SET NX`), and both then read its value; a key held only in Redis (not locally) is taken.
    func testAnInsertionIsAtomicAcrossInstances() async throws {
        let a = try makeCache(), b = try makeCache()
        let winners = try await withThrowingTaskGroup(of: String?.self) { group in
            for index in 0..<100 {
                let cache = index % 2 == 0 ? a : b
                group.addTask { try await cache.insertValue("v\(index)", forKey: "claim", ttl: .seconds(60)) ? "v\(index)" : nil }
            }
            var winners: [String] = []
            for try await winner in group { if let winner { winners.append(winner) } }
            return winners
        }
        XCTAssertEqual(winners.count, 1)
        let seenByA = try await a.value(forKey: "claim"), seenByB = try await b.value(forKey: "claim")
        XCTAssertEqual(seenByA, winners.first)
        XCTAssertEqual(seenByB, winners.first)

        let fresh = try makeCache()
        let taken = try await fresh.insertValue("late", forKey: "claim")
        XCTAssertFalse(taken)
        try await a.removeValue(forKey: "claim")
        let free = try await fresh.insertValue("after removal", forKey: "claim")
        XCTAssertTrue(free)
    }

    /// With Redis down, an insertion fails (its answer could be wrong) and stores nothing.
    func testAnInsertionFailsWhenRedisIsDown() async throws {
        let a = try makeCache()
        server.stop()
        do {
            _ = try await a.insertValue("v", forKey: "down")
            XCTFail("the insertion should fail")
        } catch {
            XCTAssertEqual(error.code, .remoteFailed)
        }
        XCTAssertNil(a.memory?.value(forKey: "down"))
    }

    func testABulkReadTakesEveryKeyTheLocalTiersMissFromRedisInOneMGET() async throws {
        let a = try makeCache(), b = try makeCache()
        for key in ["a", "b", "c"] { try await a.setValue("from-a-\(key)", forKey: key, ttl: .seconds(60)) }
        try await b.setValue("own-d", forKey: "d")
        let (mgetsBefore, getsBefore) = (try redisCalls("mget"), try redisCalls("get"))
        let values = try await b.values(forKeys: ["a", "b", "c", "d", "e"]) { keys in
            Dictionary(uniqueKeysWithValues: keys.map { ($0, "loaded-\($0)") })
        }
        XCTAssertEqual(values, ["a": "from-a-a", "b": "from-a-b", "c": "from-a-c", "d": "own-d", "e": "loaded-e"])
        // a, b, c and e in one MGET; d from B's own tiers; no single GET.
        XCTAssertEqual(try redisCalls("mget") - mgetsBefore, 1)
        XCTAssertEqual(try redisCalls("get") - getsBefore, 0)
        // Promoted: read locally from now on.
        XCTAssertEqual(b.memory?.value(forKey: "b"), "from-a-b")
    }

    func testTheFleetLockIsTakenOnceAcrossInstances() async throws {
        let a = try makeCache(), b = try makeCache()
        let linkA = try XCTUnwrap(a.remoteLink), linkB = try XCTUnwrap(b.remoteLink)
        guard case .acquired(let lock) = await linkA.acquireLock(forKey: "load", ttl: .seconds(10)) else {
            return XCTFail("the first instance takes the lock")
        }
        guard case .heldElsewhere = await linkB.acquireLock(forKey: "load", ttl: .seconds(10)) else {
            return XCTFail("the second instance finds it held")
        }
        let released = await lock.release()
        XCTAssertTrue(released)
        guard case .acquired = await linkB.acquireLock(forKey: "load", ttl: .seconds(10)) else {
            return XCTFail("released, it can be taken again")
        }
    }
}

/// Two processes, each with its own `Cache`, sharing one redis-server.
final class CacheWithRedisTwoProcessTests: XCTestCase {
    func testTwoProcessesSeeEachOthersWritesAndInvalidations() async throws {
        try RedisRequirement.requireServer()
        let server = try RedisServerProcess.start()
        defer { server.stop() }
        let client = RedisClient(configuration: RedisConfiguration(host: "127.0.0.1", port: server.port))
        let directory = try TemporaryDirectory(prefix: "stash-redis-cache"), peerDirectory = try TemporaryDirectory(prefix: "stash-redis-cache")
        let cache = try Cache<String>(directory: directory.path, codec: .string,
                                      remote: RedisCacheTier(executor: client, codec: .string, configuration: .init(keyPrefix: "two:")))
        await cache.waitUntilReceivingInvalidations()
        let applied = cache.recordAppliedInvalidations()
        let peer = try PeerProcess(port: server.port, directory: peerDirectory.path, prefix: "two:")

        // The peer's write reaches this process through Redis.
        XCTAssertEqual(try peer.send("set k from-peer"), "ok")
        await fulfillment(of: [applied.expectation(for: .key("k"))], timeout: defaultWaitTimeoutSeconds)
        let fromPeer = try await cache.value(forKey: "k")
        XCTAssertEqual(fromPeer, "from-peer")

        // This process's write makes the peer drop its local copies and read the new value.
        XCTAssertEqual(try peer.send("get k"), "value from-peer")
        XCTAssertEqual(try peer.send("local k"), "local yes")
        try await cache.setValue("from-test", forKey: "k")
        XCTAssertEqual(try peer.send("await-dropped k"), "dropped")
        XCTAssertEqual(try peer.send("get k"), "value from-test")

        // The peer's removal drops this process's memory and disk copies.
        XCTAssertEqual(try peer.send("remove k"), "ok")
        await fulfillment(of: [applied.expectation(for: .key("k"), occurrence: 2)], timeout: defaultWaitTimeoutSeconds)
        XCTAssertNil(cache.memory?.value(forKey: "k"))
        let onDisk = try await cache.disk?.contains("k")
        XCTAssertEqual(onDisk, false)
        let removed = try await cache.value(forKey: "k")
        XCTAssertNil(removed)
        peer.quit()
        await client.close()
    }
}
#endif  // Redis
