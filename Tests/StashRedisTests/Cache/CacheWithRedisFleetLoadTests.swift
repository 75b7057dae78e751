#if Redis
import Foundation
import StashTestSupport
import Testing
@testable import Stash
@testable import StashRedis

extension RedisSuites {
    /// Get-or-load with ``LoadOptions/fleetLockTTL``: one instance of the fleet
    /// loads a missing key, the others take its value from Redis; a holder that
    /// dies holds the fleet up for the lock's time to live at most.
    @Suite(.requiresRedisServer, .timeLimit(.minutes(5))) final class CacheWithRedisFleetLoadTests {
        /// The test's own server, stopped at deinit (whether the test passed, failed or threw).
        private let server: RedisServerProcess
        private let caches: SharedRedisCaches

        init() throws {
            try RedisRequirement.requireServer()
            server = try RedisServerProcess.start()
            caches = SharedRedisCaches(server: server, prefix: "fleet:")
        }

        deinit {
            server.stop()
        }

        /// Runs a test's body, then closes the caches' clients, whether the body returned or threw.
        private func closingCaches(after body: () async throws -> Void) async throws {
            try await run(body) { await caches.close() }
        }

        /// A cache sharing the test's Redis under one prefix, with a disk tier or not.
        private func makeCache(disk: Bool = true) throws -> Cache<String> {
            try caches.make(disk: disk)
        }

        private func options(lockTTL: Duration) -> LoadOptions {
            LoadOptions(ttl: .seconds(60), fleetLockTTL: lockTTL)
        }

        /// How many fleet-lock attempts Redis has seen: the lock script's `INCR` of the fencing counter.
        private func lockAttempts() throws -> Int {
            try server.calls(of: "incr")
        }

        /// Waits (polling, with a deadline) until Redis has seen `count` lock attempts.
        private func waitForLockAttempts(_ count: Int) async throws {
            let server: RedisServerProcess = server
            try await Task.detached {
                try RedisClusterProcesses.waitUntil("\(count) fleet-lock attempts") {
                    try server.calls(of: "incr") >= count
                }
            }.value
        }

        /// Starts a get-or-load of `key` on `cache` whose loader runs `result` once
        /// `gate` opens; returns once the loader runs (holding the fleet lock).
        private func startHeldLoad(
            on cache: Cache<String>, key: String = "k", options: LoadOptions, gate: TestGate,
            result: @escaping @Sendable () throws -> String
        ) async throws -> Task<String, any Error> {
            let started = ProgressCounter()
            let load = Task {
                try await cache.value(forKey: key, options: options) { _ in
                    started.increment()
                    try await gate.wait()
                    return try result()
                }
            }
            try await started.wait(reaching: 1)
            return load
        }

        @Test func concurrentLoadsOnTwoInstancesCallOneLoader() async throws {
            try await closingCaches {
                // Given two instances (one with a disk tier, one without) and a loader that waits for the test.
                let a = try makeCache(), b = try makeCache(disk: false)
                let loaderCalls = ProgressCounter()
                let gate = TestGate()
                defer { gate.open() }  // also when a wait below runs out
                let loader: @Sendable (String) async throws -> String = { _ in
                    loaderCalls.increment()
                    try await gate.wait()
                    return "loaded"
                }
                let options = options(lockTTL: .seconds(30))

                // When 8 callers on each instance ask for the same missing key at once,
                let results = Task {
                    try await withThrowingTaskGroup(of: String.self) { group in
                        for index in 0..<16 {
                            let cache = index.isMultiple(of: 2) ? a : b
                            group.addTask { try await cache.value(forKey: "k", options: options, orLoad: loader) }
                        }
                        return try await group.reduce(into: []) { $0.append($1) }
                    }
                }
                // and both instances have tried the fleet lock while one loads,
                try await loaderCalls.wait(reaching: 1)
                try await waitForLockAttempts(2)
                gate.open()

                // then every caller gets the one loaded value: one loader call fleet-wide.
                let values = try await results.value
                #expect(values == Array(repeating: "loaded", count: 16))
                #expect(loaderCalls.count == 1)
                // The instance that loaded counts a load; the other, a fleet read.
                let counts = [a.statistics, b.statistics].map { [$0.loadSuccesses, $0.fleetReads] }.sorted { $0[0] < $1[0] }
                #expect(counts == [[0, 1], [1, 0]])
                let shared = try await a.remote?.entry(forKey: "k")?.value
                #expect(shared == "loaded")
                // Either instance answers later calls without loading.
                for cache in [a, b] {
                    let again = try await cache.value(forKey: "k", options: options) { _ in
                        Issue.record("loaded again")
                        return "again"
                    }
                    #expect(again == "loaded")
                }
                // The lock was released, not left to expire.
                #expect(try server.cli(["EXISTS", "{fleet:k}:lock"]).trimmingCharacters(in: .whitespacesAndNewlines) == "0")
            }
        }

        @Test func aFailedLoadReleasesTheLockAndTheWaiterLoads() async throws {
            try await closingCaches {
                let a = try makeCache(), b = try makeCache()
                let options = options(lockTTL: .seconds(30))
                let gate = TestGate()
                defer { gate.open() }  // also when a wait below runs out
                // Given A's load holds the lock and will fail,
                let failing = try await startHeldLoad(on: a, options: options, gate: gate) { throw SourceFailure() }
                // when B asks meanwhile and A's load fails,
                let waiting = Task { try await b.value(forKey: "k", options: options) { _ in "from b" } }
                try await waitForLockAttempts(2)
                gate.open()
                // then A's callers get its error, and B takes the released lock and loads
                // well before the lock's 30 s would have run out.
                await #expect(throws: (any Error).self) { try await failing.value }
                let fromB = try await waiting.value
                #expect(fromB == "from b")
            }
        }

        /// While another instance loads, a caller with a stale value and a soft timeout gets the stale value.
        @Test func aWaiterServesItsStaleValueAfterItsSoftTimeout() async throws {
            try await closingCaches {
                let clock = ManualClock()
                let a = try makeCache(), b = try caches.make(disk: false, clock: clock)
                let options = LoadOptions(
                    ttl: .seconds(1), staleIfError: .seconds(3_600), softTimeout: .milliseconds(100), fleetLockTTL: .seconds(30))
                // Given B holds an expired value (kept as its fail-safe) that Redis no longer has,
                let old = try await b.value(forKey: "k", options: options) { _ in "old" }
                #expect(old == "old")
                try server.cli(["DEL", "fleet:k"])
                clock.advance(by: .seconds(2))
                // and A is loading the key, holding the fleet lock,
                let gate = TestGate()
                defer { gate.open() }  // also when a wait below runs out
                let loading = try await startHeldLoad(on: a, options: options, gate: gate) { "new" }
                // when B asks and its soft timeout passes while it waits for A,
                let waiting = Task {
                    try await b.value(forKey: "k", options: options) { _ in
                        Issue.record("B waits for A's value")
                        return "from b"
                    }
                }
                try await Task.detached {
                    try RedisClusterProcesses.waitUntil("B's timeout and poll are armed") { clock.sleeperCount >= 2 }
                }.value
                clock.advance(by: .milliseconds(100))
                // then B gets its stale value at once,
                let served = try await waiting.value
                #expect(served == "old")
                // and once A has loaded, B's wait ends with A's value.
                gate.open()
                let loaded = try await loading.value
                #expect(loaded == "new")
                clock.advance(by: .seconds(1))
                let fresh = try await b.value(forKey: "k", options: options) { _ in
                    Issue.record("B reads A's value")
                    return "from b"
                }
                #expect(fresh == "new")
            }
        }

        @Test func withoutRedisEachInstanceLoadsLocally() async throws {
            try await closingCaches {
                let cache = try makeCache()
                server.kill()
                let value = try await cache.value(forKey: "k", options: options(lockTTL: .seconds(30))) { _ in "local" }
                #expect(value == "local")
                #expect(cache.memory?.value(forKey: "k") == "local")
            }
        }

        /// Two processes: the peer takes the lock and dies; this process loads once the lock expires.
        @Test func theOtherProcessLoadsWhenTheHolderDies() async throws {
            try await closingCaches {
                let cache = try makeCache()
                let peerDirectory = try TemporaryDirectory(prefix: "stash-redis-cache")
                let peer = try PeerProcess(port: server.port, directory: peerDirectory.path, prefix: "fleet:")
                #expect(try peer.send("hold k 2000") == "holding")
                peer.kill()
                let loaderCalls = ProgressCounter()
                let value = try await cache.value(forKey: "k", options: options(lockTTL: .milliseconds(2_000))) { _ in
                    loaderCalls.increment()
                    return "after the holder died"
                }
                #expect(value == "after the holder died")
                #expect(loaderCalls.count == 1)
                #expect(try lockAttempts() >= 3, "the lock was found held at least once before it expired")
            }
        }

        /// Two processes loading one key: the one holding the lock loads, the other reads its value.
        @Test func twoProcessesLoadOnce() async throws {
            try await closingCaches {
                let cache = try makeCache()
                let peerDirectory = try TemporaryDirectory(prefix: "stash-redis-cache")
                let peer = try PeerProcess(port: server.port, directory: peerDirectory.path, prefix: "fleet:")
                let options = options(lockTTL: .seconds(30))
                let gate = TestGate()
                defer { gate.open() }  // also when a wait below runs out
                let here = try await startHeldLoad(on: cache, options: options, gate: gate) { "from the test" }
                let there = Task.detached { try peer.send("load k from-peer 30000") }
                try await waitForLockAttempts(2)
                gate.open()
                let value = try await here.value
                #expect(value == "from the test")
                let peerAnswer = try await there.value
                #expect(peerAnswer == "value from the test loads 0")
                peer.quit()
            }
        }
    }
}

private struct SourceFailure: Error {}

#endif  // Redis
