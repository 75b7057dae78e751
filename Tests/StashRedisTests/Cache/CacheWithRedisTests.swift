#if Redis
import Foundation
import Logging
import NIOCore
#if ServiceLifecycle
import ServiceLifecycle
#endif
import StashTestSupport
import Testing
@testable import Stash
@testable import StashRedis

extension RedisSuites {
    /// `Cache` with memory, disk and Redis tiers: two instances sharing one real
    /// redis-server, each seeing the other's writes and invalidations.
    @Suite(.requiresRedisServer, .timeLimit(.minutes(5))) final class CacheWithRedisTests {
        /// The test's own server, stopped at deinit (whether the test passed, failed or threw).
        private let server: RedisServerProcess
        private let caches: SharedRedisCaches

        init() throws {
            try RedisRequirement.requireServer()
            server = try RedisServerProcess.start()
            caches = SharedRedisCaches(server: server, prefix: "shared:")
        }

        deinit {
            server.stop()
        }

        /// Runs a test's body, then closes the caches' clients, whether the body returned or threw.
        private func closingCaches(after body: () async throws -> Void) async throws {
            try await run(body) { await caches.close() }
        }

        /// A cache on its own directory, sharing the test's Redis under one prefix.
        private func makeCache(memory: Bool = true, disk: Bool = true, logger: Logger = Logger(label: "test")) throws -> Cache<String> {
            try caches.make(memory: memory, disk: disk, logger: logger)
        }

        private func redisCalls(_ command: String) throws -> Int {
            try server.calls(of: command)
        }

        @Test func twoInstancesSeeEachOthersWritesAndInvalidations() async throws {
            try await closingCaches {
                let a = try makeCache(), b = try makeCache()
                await a.waitUntilReceivingInvalidations()
                await b.waitUntilReceivingInvalidations()
                let appliedByA = a.recordAppliedInvalidations(), appliedByB = b.recordAppliedInvalidations()

                // Given A writes, when B reads, then B gets A's value from Redis and
                // promotes it into its memory and disk tiers with the remaining time to live.
                try await a.setValue("v1", forKey: "k", ttl: .seconds(60))
                // (B hears of the write too; a read racing with that would rightly skip its promotion.)
                try await appliedByB.wait(for: .key("k"))
                let first = try await b.value(forKey: "k")
                #expect(first == "v1")
                #expect(b.memory?.value(forKey: "k") == "v1")
                let promoted = try #require(try b.disk?.valueWithMetadata(forKey: "k"))
                let remaining = try #require(promoted.expiration) - b.disk!.nanosecondsNow
                #expect(remaining > 50_000_000_000)
                #expect(remaining <= 60_000_000_000)

                // When A writes again, then B drops its memory and disk copies and reads the new value.
                try await a.setValue("v2", forKey: "k", ttl: .seconds(60))
                try await appliedByB.wait(for: .key("k"), occurrence: 2)
                #expect(b.memory?.value(forKey: "k") == nil)
                let onDiskB = try await b.disk?.contains("k")
                #expect(onDiskB == false)
                let second = try await b.value(forKey: "k")
                #expect(second == "v2")

                // When B removes it, then A drops it everywhere, and neither finds it.
                let removed = try await b.removeValue(forKey: "k")
                #expect(removed)
                try await appliedByA.wait(for: .key("k"))
                #expect(a.memory?.value(forKey: "k") == nil)
                let onDiskA = try await a.disk?.contains("k")
                #expect(onDiskA == false)
                let afterRemoval = try await a.value(forKey: "k")
                #expect(afterRemoval == nil)

                // When A empties itself, then B drops everything too.
                try await b.setValue("x", forKey: "other")
                try await a.removeAll()
                try await appliedByB.wait(for: .all)
                #expect(b.memory?.count == 0)
                let otherOnDisk = try await b.disk?.contains("other")
                #expect(otherOnDisk == false)
                let afterRemoveAll = try await b.value(forKey: "other")
                #expect(afterRemoveAll == nil)
                // An instance never hears its own changes.
                #expect(!appliedByA.received.contains(.all))
            }
        }

        @Test func aLocalMemoryHitMakesNoNetworkCall() async throws {
            try await closingCaches {
                let cache = try makeCache()
                try await cache.setValue("v", forKey: "hot")
                let gets = try redisCalls("get")
                for _ in 0..<100 {
                    let hit = try await cache.value(forKey: "hot")
                    #expect(hit == "v")
                }
                #expect(try redisCalls("get") == gets, "memory hits never reach Redis")
            }
        }

        @Test func everyTierSubsetReadsAndWritesThroughRedis() async throws {
            try await closingCaches {
                let writer = try makeCache()
                for (memory, disk) in [(true, false), (false, true), (false, false)] {
                    let cache = try makeCache(memory: memory, disk: disk)
                    try await writer.setValue("from writer \(memory) \(disk)", forKey: "subset")
                    let read = try await cache.value(forKey: "subset")
                    #expect(read == "from writer \(memory) \(disk)")
                    try await cache.setValue("mine", forKey: "own")
                    let back = try await writer.value(forKey: "own")
                    #expect(back == "mine")
                    try await writer.removeValue(forKey: "own")
                }
            }
        }

        /// Many quick writes of one key, from the synchronous API (sent in the
        /// background) and the async one: Redis ends with the last local write.
        @Test func changesOfOneKeyReachRedisInTheirLocalOrder() async throws {
            try await closingCaches {
                let cache = try makeCache()
                let reader = try makeCache(memory: false, disk: false)
                try writeSynchronously(cache, count: 300)
                try await cache.setValue("last", forKey: "ordered")
                let shared = try await reader.value(forKey: "ordered")
                #expect(shared == "last")
                #expect(cache.core.remoteLink?.order.keysInFlight == [])
            }
        }

        /// `close` waits for the changes the synchronous API sends to Redis in the background: once
        /// it returns, every one of them is in Redis, and the memory and disk tiers are closed.
        @Test func closingWaitsForTheChangesOnTheirWayToRedis() async throws {
            try await closingCaches {
                let cache = try makeCache()
                let reader = try makeCache(memory: false, disk: false)
                try writeDistinctKeysSynchronously(cache, count: 200)
                await cache.close()
                #expect(cache.core.background.count == 0)
                for index in 0..<200 {
                    let shared = try await reader.value(forKey: "close-\(index)")
                    #expect(shared == "v\(index)")
                }
                #expect(cache.memory?.autoTrimInterval == nil)
                do throws(StashError) {
                    _ = try await cache.disk?.value(forKey: "close-0")
                    Issue.record("the disk tier answered after close")
                } catch {
                    #expect(error.code == .closed)
                }
            }
        }

        /// A burst of synchronous writes while Redis does not answer (SIGSTOP) holds at most the
        /// limit of sends under way; the keys past it are marked stale in their order, and once Redis
        /// answers again each key there holds this instance's last write or nothing (the repair
        /// removed it), never an older value; every write is kept locally.
        @Test func aBurstUnderAStalledRedisHoldsBoundedSendsAndLosesNothing() async throws {
            try await closingCaches {
                let logs = LogRecorder()
                // Memory only: the burst takes microseconds, well within the command timeout, so no send
                // fails (and frees its place) before the count is read.
                let cache = try makeCache(disk: false, logger: logs.logger)
                let reader = try makeCache(memory: false, disk: false)
                cache.core.remoteLink?.maximumPendingSends = 50
                await cache.waitUntilReceivingInvalidations()
                let applied = cache.recordAppliedInvalidations()
                try await reader.setValue("old", forKey: "close-199")  // an older shared copy to be removed
                // Heard before the burst, so that it does not remove this instance's own later write.
                try await yield(until: { applied.received.contains(.key("close-199")) })
                server.pause()
                try writeDistinctKeysSynchronously(cache, count: 200)
                #expect(cache.core.remoteLink?.pendingSendCount == 50)
                #expect(cache.core.background.count <= 51, "the sends, and at most one repair")
                server.resume()
                await cache.close()
                for index in 0..<200 {
                    let local = cache.memory?.value(forKey: "close-\(index)")
                    #expect(local == "v\(index)")
                    let shared = try await reader.value(forKey: "close-\(index)")
                    #expect(shared == nil || shared == "v\(index)", "close-\(index) holds \(shared ?? "nil") in Redis")
                }
                #expect(logs.messages(at: .warning).filter { $0.contains("slower than the writes") }.count == 1)
            }
        }

        #if ServiceLifecycle
        /// A client, its tier and a cache in one group, listed in the order the docs give: on graceful
        /// shutdown the cache's last changes reach Redis, then the tier and the client close.
        @Test func aServiceGroupClosesTheCacheThenTheTierThenTheClient() async throws {
            try await closingCaches {
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
                #expect(last == "v49")
                do throws(RedisError) {
                    _ = try await client.get("shared:close-0")
                    Issue.record("the client answered after the group shut down")
                } catch {
                    #expect(error.code == .connectionClosed)
                }
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
        @Test func anInsertionIsAtomicAcrossInstances() async throws {
            try await closingCaches {
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
                #expect(winners.count == 1)
                let seenByA = try await a.value(forKey: "claim"), seenByB = try await b.value(forKey: "claim")
                #expect(seenByA == winners.first)
                #expect(seenByB == winners.first)

                let fresh = try makeCache()
                let taken = try await fresh.insertValue("late", forKey: "claim")
                #expect(!taken)
                try await a.removeValue(forKey: "claim")
                let free = try await fresh.insertValue("after removal", forKey: "claim")
                #expect(free)
            }
        }

        /// With Redis down, an insertion fails (its answer could be wrong) and stores nothing.
        @Test func anInsertionFailsWhenRedisIsDown() async throws {
            try await closingCaches {
                let a = try makeCache()
                server.stop()
                do throws(StashError) {
                    _ = try await a.insertValue("v", forKey: "down")
                    Issue.record("the insertion should fail")
                } catch {
                    #expect(error.code == .remoteFailed)
                }
                #expect(a.memory?.value(forKey: "down") == nil)
            }
        }

        @Test func aBulkReadTakesEveryKeyTheLocalTiersMissFromRedisInOneMGET() async throws {
            try await closingCaches {
                let a = try makeCache(), b = try makeCache()
                for key in ["a", "b", "c"] { try await a.setValue("from-a-\(key)", forKey: key, ttl: .seconds(60)) }
                try await b.setValue("own-d", forKey: "d")
                let (mgetsBefore, getsBefore) = (try redisCalls("mget"), try redisCalls("get"))
                let values = try await b.values(forKeys: ["a", "b", "c", "d", "e"]) { keys in
                    Dictionary(uniqueKeysWithValues: keys.map { ($0, "loaded-\($0)") })
                }
                #expect(values == ["a": "from-a-a", "b": "from-a-b", "c": "from-a-c", "d": "own-d", "e": "loaded-e"])
                // a, b, c and e in one MGET; d from B's own tiers; no single GET.
                #expect(try redisCalls("mget") - mgetsBefore == 1)
                #expect(try redisCalls("get") - getsBefore == 0)
                // Promoted: read locally from now on.
                #expect(b.memory?.value(forKey: "b") == "from-a-b")
            }
        }

        /// A batch write reaches Redis and the other instance, which drops its older copies.
        @Test func setValuesReachesRedisAndTheOtherInstanceDropsItsCopies() async throws {
            try await closingCaches {
                let a = try makeCache(), b = try makeCache()
                await a.waitUntilReceivingInvalidations()
                await b.waitUntilReceivingInvalidations()
                let appliedByB = b.recordAppliedInvalidations()
                try await b.setValue("old-x", forKey: "x", ttl: .seconds(60))
                let setsBefore = try redisCalls("set")
                let values = ["x": "new-x", "y": "new-y", "z": "new-z"]
                try await a.setValues(values, ttl: .seconds(60))
                #expect(try redisCalls("set") - setsBefore == 3)
                try await appliedByB.wait(for: .key("x"))
                #expect(b.memory?.value(forKey: "x") == nil)
                for (key, value) in values {
                    #expect(try await b.value(forKey: key) == value)
                    #expect(a.memory?.value(forKey: key) == value)
                }
            }
        }

        /// What a bulk load returned is shared: another instance reads it from Redis, not its loader.
        @Test func aBulkLoadSharesItsValuesThroughRedis() async throws {
            try await closingCaches {
                let a = try makeCache(), b = try makeCache()
                let keys = ["p", "q", "r"]
                _ = try await a.values(forKeys: keys) { keys in
                    Dictionary(uniqueKeysWithValues: keys.map { ($0, "loaded-by-a-\($0)") })
                }
                try await yield(until: { a.core.remoteLink?.pendingSendCount == 0 })  // sent in the background
                #expect(try server.cli(["EXISTS"] + keys.map { "shared:\($0)" }).trimmingCharacters(in: .whitespacesAndNewlines) == "3")
                let loadsByB = LockedValue(0)
                let values = try await b.values(forKeys: keys) { keys in
                    loadsByB.withLock { $0 += keys.count }
                    return Dictionary(uniqueKeysWithValues: keys.map { ($0, "loaded-by-b-\($0)") })
                }
                #expect(values == ["p": "loaded-by-a-p", "q": "loaded-by-a-q", "r": "loaded-by-a-r"])
                #expect(loadsByB.withLock { $0 } == 0)
            }
        }

        @Test func theFleetLockIsTakenOnceAcrossInstances() async throws {
            try await closingCaches {
                let a = try makeCache(), b = try makeCache()
                let linkA = try #require(a.core.remoteLink), linkB = try #require(b.core.remoteLink)
                guard case .acquired(let lock) = await linkA.acquireLock(forKey: "load", ttl: .seconds(10)) else {
                    Issue.record("the first instance takes the lock")
                    return
                }
                guard case .heldElsewhere = await linkB.acquireLock(forKey: "load", ttl: .seconds(10)) else {
                    Issue.record("the second instance finds it held")
                    return
                }
                let released = await lock.release()
                #expect(released)
                guard case .acquired = await linkB.acquireLock(forKey: "load", ttl: .seconds(10)) else {
                    Issue.record("released, it can be taken again")
                    return
                }
            }
        }
    }
}

extension RedisSuites {
    /// Two processes, each with its own `Cache`, sharing one redis-server.
    @Suite(.requiresRedisServer, .timeLimit(.minutes(5))) struct CacheWithRedisTwoProcessTests {
        @Test func twoProcessesSeeEachOthersWritesAndInvalidations() async throws {
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
            #expect(try peer.send("set k from-peer") == "ok")
            try await applied.wait(for: .key("k"))
            let fromPeer = try await cache.value(forKey: "k")
            #expect(fromPeer == "from-peer")

            // This process's write makes the peer drop its local copies and read the new value.
            #expect(try peer.send("get k") == "value from-peer")
            #expect(try peer.send("local k") == "local yes")
            try await cache.setValue("from-test", forKey: "k")
            #expect(try peer.send("await-dropped k") == "dropped")
            #expect(try peer.send("get k") == "value from-test")

            // The peer's removal drops this process's memory and disk copies.
            #expect(try peer.send("remove k") == "ok")
            try await applied.wait(for: .key("k"), occurrence: 2)
            #expect(cache.memory?.value(forKey: "k") == nil)
            let onDisk = try await cache.disk?.contains("k")
            #expect(onDisk == false)
            let removed = try await cache.value(forKey: "k")
            #expect(removed == nil)
            peer.quit()
            await client.close()
        }
    }
}
#endif  // Redis
