#if Redis
import Foundation
import Logging
import StashTestSupport
import XCTest
@testable import Stash
@testable import StashRedis

/// Redis killed (SIGKILL) and restarted, with its append-only file, in the
/// middle of a read/write burst through a `Cache` with memory, disk and Redis:
/// the restarted Redis holds what it had acknowledged, older than what the
/// cache wrote during the outage.
final class CacheWithRedisFaultTests: XCTestCase {
    /// Workers each own a few keys, which they write with increasing versions,
    /// and read every worker's keys; each remembers the highest version it has seen of each key.
    private struct Burst: Sendable {
        let cache: Cache<String>
        let workers = 4
        let keysPerWorker = 8
        let progress = ProgressCounter()
        let stop = LockedValue(false)
        let writing = LockedValue(true)
        let failures = LockedValue<[String]>([])
        /// The last version each key was written with (the reference model).
        let lastWritten = LockedValue<[String: Int]>([:])

        func key(_ worker: Int, _ index: Int) -> String { "w\(worker)-k\(index)" }

        func run() async {
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<workers {
                    group.addTask { await work(worker) }
                }
            }
        }

        private func work(_ worker: Int) async {
            var generator = SeededGenerator(seed: UInt64(worker) + 17)
            var seen: [String: Int] = [:]
            var version = 0
            while !stop.withLock({ $0 }) {
                do {
                    if Bool.random(using: &generator), writing.withLock({ $0 }) {
                        let key = key(worker, Int.random(in: 0..<keysPerWorker, using: &generator))
                        version += 1
                        try await cache.setValue(String(version), forKey: key)
                        lastWritten.withLock { $0[key] = version }
                        seen[key] = version
                    } else {
                        let key = key(Int.random(in: 0..<workers, using: &generator), Int.random(in: 0..<keysPerWorker, using: &generator))
                        if let read = try await cache.value(forKey: key).flatMap({ Int($0) }) {
                            if read < seen[key, default: 0] {
                                failures.withLock { $0.append("\(key): read \(read) after seeing \(seen[key, default: 0])") }
                            }
                            seen[key] = read
                        }
                    }
                } catch {
                    failures.withLock { $0.append("a call failed: \(error)") }
                }
                progress.increment()
                // A memory hit never suspends: let the cache's own tasks and the test run too.
                await Task.yield()
            }
        }
    }

    func testRedisKilledAndRestartedDuringABurst() async throws {
        try RedisRequirement.requireServer()
        let server = try RedisServerProcess.start(["--appendonly", "yes", "--appendfsync", "always"])
        defer { server.stop() }
        let client = RedisClient(configuration: server.faultTestConfiguration)
        let breakerClock = ManualClock()
        let tierLogs = LogRecorder(), tierLogger = tierLogs.logger
        let cacheLogs = LogRecorder(), cacheLogger = cacheLogs.logger
        let tier = RedisCacheTier(executor: client, codec: .string, configuration: .init(keyPrefix: "burst:"),
                                  clock: breakerClock, logger: tierLogger)
        let directory = try TemporaryDirectory(prefix: "stash-redis-cache")
        // The cache's clock times the quiet second that ends an outage.
        let cacheClock = ManualClock()
        let cache = try Cache<String>(
            memory: MemoryCache(configuration: .init(label: "burst", clock: cacheClock, logger: cacheLogger)),
            disk: DiskCache(directory: directory.path, codec: .string, configuration: .init(logger: cacheLogger)),
            remote: tier, logger: cacheLogger)
        await cache.waitUntilReceivingInvalidations()
        let applied = cache.recordAppliedInvalidations()
        let burst = Burst(cache: cache)
        let running = Task { await burst.run() }

        // Healthy, then Redis dies mid-burst: the burst goes on against the local tiers.
        await fulfillment(of: [burst.progress.expectation(reaching: 300)], timeout: defaultWaitTimeoutSeconds)
        server.kill()
        let atKill = burst.progress.count
        await fulfillment(of: [burst.progress.expectation(reaching: atKill + 600)], timeout: defaultWaitTimeoutSeconds)
        XCTAssertEqual(tier.engine.breaker.phase, .open, "the breaker stops paying timeouts")

        // Redis comes back with its append-only file: the values it acknowledged
        // before the kill, older than what the cache wrote since. From here the
        // burst only reads, so the last versions stay the ones written in the outage.
        burst.writing.withLock { $0 = false }
        try server.launch()
        breakerClock.advance(by: .seconds(5))
        // The subscription comes back and says that anything may have changed;
        // the cache keeps the keys Redis holds older copies of, and repairs them.
        await fulfillment(of: [applied.expectation(for: .all)], timeout: defaultWaitTimeoutSeconds)
        let atRecovery = burst.progress.count
        await fulfillment(of: [burst.progress.expectation(reaching: atRecovery + 600)], timeout: defaultWaitTimeoutSeconds)
        burst.stop.withLock { $0 = true }
        await running.value

        XCTAssertEqual(burst.failures.withLock { $0 }, [], "no call failed and no caller saw a value older than one it had seen")
        // Every write reached the local tiers, and the invalidation of everything
        // kept the keys Redis was missing: the last version of each key is served.
        for (key, version) in burst.lastWritten.withLock({ $0 }) {
            let read = try await cache.value(forKey: key)
            XCTAssertEqual(read, String(version), key)
        }
        // Redis no longer holds a copy older than the cache's: each key is gone or current.
        try RedisClusterProcesses.waitUntil("the stale keys are removed from Redis") { cache.remoteLink?.hasStaleKeys == false }
        XCTAssertEqual(tier.engine.breaker.phase, .closed)
        for (key, version) in burst.lastWritten.withLock({ $0 }) {
            let shared = try await tier.entry(forKey: key)?.value
            XCTAssertTrue(shared == nil || shared == String(version), "\(key): Redis holds \(shared ?? "-"), the cache wrote \(version)")
        }
        // The outage ends at the first success a quiet second after its last failure: until then,
        // a restarted server that answers once and fails again is the same outage.
        XCTAssertEqual(cacheLogs.messages(at: .info).count, 0, "not over before the quiet second")
        cacheClock.advance(by: .seconds(1))
        let probe = try await cache.value(forKey: "probe")
        XCTAssertNil(probe)
        // One outage, logged once by the cache (and once by the tier's breaker), not per call:
        // one warning and one recovery line, against hundreds of failed remote calls.
        let warnings = cacheLogs.count(atLeast: .warning)
        let recoveries = cacheLogs.messages(at: .info).count
        XCTAssertEqual(warnings, 1, "\(cacheLogs.messages(at: .warning))")
        XCTAssertEqual(recoveries, 1, "the recovery is logged once")
        XCTAssertEqual(tierLogs.count(atLeast: .error), 1, "\(tierLogs.messages(at: .error))")
        await tier.close()
        await client.close()
    }

    /// Redis restarted, answering once and then failing again: one outage for
    /// the cache, ended only by a success a quiet second after its last failure.
    func testARestartThatAnswersOnceAndFailsAgainIsOneOutage() async throws {
        try RedisRequirement.requireServer()
        let server = try RedisServerProcess.start()
        defer { server.stop() }
        let client = RedisClient(configuration: server.faultTestConfiguration)
        let cacheLogs = LogRecorder(), cacheLogger = cacheLogs.logger
        let tier = RedisCacheTier(executor: client, codec: .string, configuration: .init(keyPrefix: "flap:"),
                                  clock: ManualClock(), logger: Logger(label: "tier"))
        let clock = ManualClock()
        let cache = try Cache<String>(
            memory: MemoryCache(configuration: .init(label: "flap", clock: clock)), disk: nil, remote: tier,
            logger: cacheLogger)
        await cache.waitUntilReceivingInvalidations()
        let recoveries = { cacheLogs.messages(at: .info).count }
        func read() async throws {
            let value = try await cache.value(forKey: "k")
            XCTAssertNil(value, "a miss, and never an error")
        }

        try await read()
        server.kill()
        try await read()
        XCTAssertEqual(cacheLogs.count(atLeast: .warning), 1, "the outage starts")
        try server.launch()
        try await read()
        server.kill()
        try await read()
        try server.launch()
        try await read()
        XCTAssertEqual(recoveries(), 0, "answering within a second of a failure does not end the outage")

        clock.advance(by: .seconds(1))
        try await read()
        XCTAssertEqual(cacheLogs.count(atLeast: .warning), 1, "\(cacheLogs.messages(at: .warning))")
        XCTAssertEqual(recoveries(), 1, "one recovery, logged once")
        await tier.close()
        await client.close()
    }
}
#endif  // Redis
