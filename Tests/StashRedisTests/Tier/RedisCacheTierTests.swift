#if Redis
import Foundation
import NIOCore
import Stash
import StashTestSupport
import XCTest
@testable import StashRedis

final class RedisCacheTierTests: XCTestCase {
    private var server: RedisServerProcess!
    private var clients: [RedisClient] = []
    private var tiers: [RedisCacheTier<String>] = []

    override func setUpWithError() throws {
        try RedisRequirement.requireServer()
        server = try RedisServerProcess.start(["--proto-max-bulk-len", "1mb"])
    }

    override func tearDown() async throws {
        for tier in tiers { await tier.close() }
        for client in clients { await client.close() }
        server?.stop()
    }

    private func makeTier(
        prefix: String = "app:", clock: any CacheClock = SystemClock(), usesRESP3: Bool = true
    ) -> RedisCacheTier<String> {
        var configuration = RedisConfiguration(host: "127.0.0.1", port: server.port)
        configuration.usesRESP3 = usesRESP3
        let client = RedisClient(configuration: configuration)
        clients.append(client)
        let tier = RedisCacheTier(executor: client, codec: .string, configuration: .init(keyPrefix: prefix), clock: clock)
        tiers.append(tier)
        return tier
    }

    func testAValueComesBackWithItsRemainingTimeToLive() async throws {
        let tier = makeTier()
        try await tier.setValue("hello", forKey: "greeting", ttl: .seconds(60))
        let entry = try await tier.entry(forKey: "greeting")
        XCTAssertEqual(entry?.value, "hello")
        let ttl = try XCTUnwrap(entry?.ttl)
        XCTAssertGreaterThan(ttl, .seconds(55))
        XCTAssertLessThanOrEqual(ttl, .seconds(60))
        // Redis carries the expiry too, and the key is namespaced.
        let pttl = Int(try server.cli(["PTTL", "app:greeting"]).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -3
        XCTAssertGreaterThan(pttl, 55_000)
        try await tier.setValue("forever", forKey: "f", ttl: nil)
        let forever = try await tier.entry(forKey: "f")
        XCTAssertEqual(forever?.value, "forever")
        XCTAssertNil(forever?.ttl)
        let missing = try await tier.entry(forKey: "missing")
        XCTAssertNil(missing)
    }

    func testAnExpiredHeaderIsAMissEvenBeforeRedisDropsTheKey() async throws {
        let wall = ManualClock(start: 1_700_000_000_000_000_000)
        let client = RedisClient(configuration: RedisConfiguration(host: "127.0.0.1", port: server.port))
        clients.append(client)
        let tier = RedisCacheTier(executor: client, codec: .string, wallClock: wall)
        try await tier.setValue("v", forKey: "k", ttl: .seconds(30))
        wall.advance(by: .seconds(31))
        let entry = try await tier.entry(forKey: "k")
        XCTAssertNil(entry)
        XCTAssertEqual(tier.statistics, CacheStatistics(hits: 0, misses: 1))  // an expired header is a miss
    }

    func testStatisticsCountEveryKeyReadAsAHitOrAMiss() async throws {
        let tier = makeTier()
        try await tier.setValues([("a", "1"), ("b", "2")], ttl: nil)
        _ = try await tier.entry(forKey: "a")
        _ = try await tier.entry(forKey: "missing")
        _ = try await tier.entries(forKeys: ["a", "b", "missing"])
        XCTAssertEqual(tier.statistics, CacheStatistics(hits: 3, misses: 2))
    }

    func testBatchesReadAndWriteInOneWrite() async throws {
        let tier = makeTier()
        try await tier.setValues((0..<20).map { ("b\($0)", "v\($0)") }, ttl: .seconds(60))
        let entries = try await tier.entries(forKeys: ["b0", "missing", "b19"])
        XCTAssertEqual(entries.map { $0?.value }, ["v0", nil, "v19"])
        XCTAssertNotNil(entries[2]?.ttl)
    }

    func testABatchOfValuesOfDifferentSizesComesBackIntact() async throws {
        let tier = makeTier()
        // The payloads of a batch share one buffer: each must come back whole and alone.
        let values = ["", "a", String(repeating: "x", count: 100), String(repeating: "é", count: 3000), "last"]
        let keys = values.indices.map { "size\($0)" }
        try await tier.setValues(Array(zip(keys, values)), ttl: nil)
        let entries = try await tier.entries(forKeys: keys)
        XCTAssertEqual(entries.map { $0?.value }, values)
        XCTAssertTrue(entries.allSatisfy { $0 != nil && $0?.ttl == nil }, "no expiry was asked for")
        let single = try await tier.entries(forKeys: ["size3"])
        XCTAssertEqual(single.map { $0?.value }, [values[3]])
        let none = try await tier.entries(forKeys: [])
        XCTAssertEqual(none.count, 0)
        try await tier.setValues([], ttl: .seconds(1))  // nothing to send
    }

    func testABatchWithATimeToLiveThatIsNotPositiveWritesNothing() async throws {
        let tier = makeTier()
        do {
            try await tier.setValues([("z1", "a"), ("z2", "b")], ttl: .zero)
            XCTFail("a time to live of zero is refused")
        } catch {
            XCTAssertEqual(error.code, .invalidArgument)
        }
        let entries = try await tier.entries(forKeys: ["z1", "z2"])
        XCTAssertEqual(entries.map { $0?.value }, [nil, nil])
    }

    func testTheStoredFormatIsAHeaderThenTheCodecsBytes() async throws {
        // Every process of a fleet reads what the others wrote: the layout is fixed.
        let wall = ManualClock(start: 1_700_000_000_000_000_000)
        let client = RedisClient(configuration: RedisConfiguration(host: "127.0.0.1", port: server.port))
        clients.append(client)
        let tier = RedisCacheTier(executor: client, codec: .string, configuration: .init(keyPrefix: "fmt:"), wallClock: wall)
        try await tier.setValue("one", forKey: "a", ttl: .seconds(30))
        try await tier.setValues([("b", "two"), ("c", "three")], ttl: nil)
        func stored(_ key: String) async throws -> [UInt8] {
            let buffer = try await client.get("fmt:" + key)
            return try XCTUnwrap(buffer.map { Array($0.readableBytesView) })
        }
        let expiresAt = UInt64(1_700_000_030_000)  // Unix milliseconds, big-endian
        let expiryBytes = (0..<8).map { UInt8(truncatingIfNeeded: expiresAt >> (56 - 8 * UInt64($0))) }
        let storedA = try await stored("a"), storedB = try await stored("b"), storedC = try await stored("c")
        XCTAssertEqual(storedA, [0xC5, 1] + expiryBytes + Array("one".utf8))
        XCTAssertEqual(storedB, [0xC5, 1] + Array(repeating: 0, count: 8) + Array("two".utf8))
        XCTAssertEqual(storedC, [0xC5, 1] + Array(repeating: 0, count: 8) + Array("three".utf8))
    }

    func testForeignBytesAreADecodingError() async throws {
        let tier = makeTier()
        try server.cli(["SET", "app:foreign", "not ours"])
        do {
            _ = try await tier.entry(forKey: "foreign")
            XCTFail("foreign bytes must not decode")
        } catch {
            XCTAssertEqual(error.code, .decodingFailed)
        }
    }

    /// Two instances share one Redis: each sees the other's writes and gets the
    /// other's invalidations, never its own.
    func testTwoInstancesSeeEachOthersWritesAndInvalidations() async throws {
        // One subscribed in RESP3 (messages are pushes), one in RESP2 (messages are arrays).
        let first = makeTier()
        let second = makeTier(usesRESP3: false)
        let firstHeard = InvalidationRecorder()
        let secondHeard = InvalidationRecorder()
        try await first.startReceivingInvalidations(firstHeard.handler)
        try await second.startReceivingInvalidations(secondHeard.handler)

        try await first.setValue("from first", forKey: "shared", ttl: .seconds(60))
        await fulfillment(of: [secondHeard.expectation(for: .key("shared"))], timeout: defaultWaitTimeoutSeconds)
        let seen = try await second.entry(forKey: "shared")
        XCTAssertEqual(seen?.value, "from first")

        try await second.removeValue(forKey: "shared")
        await fulfillment(of: [firstHeard.expectation(for: .key("shared"))], timeout: defaultWaitTimeoutSeconds)
        let gone = try await first.entry(forKey: "shared")
        XCTAssertNil(gone)

        try await second.setValue("x", forKey: "other", ttl: nil)
        await fulfillment(of: [firstHeard.expectation(for: .key("other"))], timeout: defaultWaitTimeoutSeconds)
        XCTAssertEqual(firstHeard.received, [.key("shared"), .key("other")])
        XCTAssertEqual(secondHeard.received, [.key("shared")], "an instance never hears its own changes")
    }

    func testRemoveAllClearsOnlyItsPrefixAndTellsEveryone() async throws {
        let tier = makeTier(prefix: "mine:")
        let neighbour = makeTier(prefix: "theirs:")
        let listener = makeTier(prefix: "mine:")
        let heard = InvalidationRecorder()
        try await listener.startReceivingInvalidations(heard.handler)
        for index in 0..<300 { try await tier.setValue("v\(index)", forKey: "k\(index)", ttl: nil) }
        try await neighbour.setValue("kept", forKey: "k1", ttl: nil)
        try await tier.removeAll()
        await fulfillment(of: [heard.expectation(for: .all)], timeout: defaultWaitTimeoutSeconds)
        let dbsize = try server.cli(["KEYS", "mine:*"]).trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertEqual(dbsize, "")
        let kept = try await neighbour.entry(forKey: "k1")
        XCTAssertEqual(kept?.value, "kept")
    }

    func testTheLockHasOneHolderAndGrowingFencingTokens() async throws {
        let first = makeTier()
        let second = makeTier()
        let lock = try await first.acquireLock(forKey: "report", ttl: .seconds(30))
        let held = try XCTUnwrap(lock)
        let contended = try await second.acquireLock(forKey: "report", ttl: .seconds(30))
        XCTAssertNil(contended)
        try await first.releaseLock(held)
        let next = try await second.acquireLock(forKey: "report", ttl: .seconds(30))
        let nextHeld = try XCTUnwrap(next)
        XCTAssertGreaterThan(nextHeld.fencingToken, held.fencingToken)
        do {
            try await first.releaseLock(held)
            XCTFail("a released lock cannot be released twice")
        } catch {
            XCTAssertEqual(error.code, .lockNotHeld)
        }
        let stillHeld = try await first.acquireLock(forKey: "report", ttl: .seconds(30))
        XCTAssertNil(stillHeld, "the stale release did not free the new holder's lock")
        try await second.releaseLock(nextHeld)
        // The fencing counter expires a day after the key's last attempt, so locked keys leave
        // no counter behind for ever.
        let fenceTTL = try XCTUnwrap(Int(server.cli(["PTTL", "{app:report}:fence"]).trimmingCharacters(in: .whitespacesAndNewlines)))
        XCTAssertGreaterThan(fenceTTL, 86_000_000)
        XCTAssertLessThanOrEqual(fenceTTL, 86_400_000)
    }

    /// The server is started with `proto-max-bulk-len 1mb`: a 2 MB value is refused
    /// with a clear error, and the tier goes on working.
    func testAValueOverTheServersBulkLimitIsAClearError() async throws {
        let tier = makeTier()
        try await tier.setValue("small", forKey: "before", ttl: nil)
        do {
            try await tier.setValue(String(repeating: "x", count: 2 * 1024 * 1024), forKey: "huge", ttl: nil)
            XCTFail("the server refuses values over proto-max-bulk-len")
        } catch {
            XCTAssertEqual(error.code, .valueTooLarge, "\(error)")
        }
        let before = try await tier.entry(forKey: "before")
        XCTAssertEqual(before?.value, "small")
        let huge = try await tier.entry(forKey: "huge")
        XCTAssertNil(huge)
    }

    func testAValueOverTheTiersOwnLimitNeverLeaves() async throws {
        let client = RedisClient(configuration: RedisConfiguration(host: "127.0.0.1", port: server.port))
        clients.append(client)
        var configuration = RedisCacheTier<String>.Configuration()
        configuration.maximumValueSize = 100
        let tier = RedisCacheTier(executor: client, codec: .string, configuration: configuration)
        do {
            try await tier.setValue(String(repeating: "x", count: 200), forKey: "k", ttl: nil)
            XCTFail("over the tier's limit")
        } catch {
            XCTAssertEqual(error.code, .valueTooLarge)
        }
    }

    func testInvalidationMessagesParse() {
        let tier = makeTier()
        var message = ByteBuffer()
        RESPEncoder.write(tier.engine.invalidationCommand(forKey: "a|b\nc"), into: &message)
        XCTAssertEqual(RedisTierEngine.parseInvalidation(ByteBuffer(string: "kOTHER\na|b\nc"), ownID: tier.instanceID), .key("a|b\nc"))
        XCTAssertNil(RedisTierEngine.parseInvalidation(ByteBuffer(string: "k\(tier.instanceID)\nx"), ownID: tier.instanceID))
        XCTAssertEqual(RedisTierEngine.parseInvalidation(ByteBuffer(string: "aOTHER\n"), ownID: tier.instanceID), .all)
        XCTAssertNil(RedisTierEngine.parseInvalidation(ByteBuffer(string: "garbage"), ownID: "x"))
        XCTAssertNil(RedisTierEngine.parseInvalidation(ByteBuffer(), ownID: "x"))
    }
}
#endif  // Redis
