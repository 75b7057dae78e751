#if Redis
import Foundation
import Stash
import StashTestSupport
import XCTest
@testable import StashRedis

/// What a tier does with what it did not write itself, or no longer finds: a foreign value in a
/// batch read, and a fencing counter that expired.
final class RedisCacheTierDamageTests: XCTestCase {
    private var server: RedisServerProcess!
    private var client: RedisClient!
    private var tier: RedisCacheTier<String>!

    override func setUpWithError() throws {
        try RedisRequirement.requireServer()
        server = try RedisServerProcess.start()
        client = RedisClient(configuration: RedisConfiguration(host: "127.0.0.1", port: server.port))
        tier = RedisCacheTier(executor: client, codec: .string, configuration: .init(keyPrefix: "app:"))
    }

    override func tearDown() async throws {
        await tier?.close()
        await client?.close()
        server?.stop()
    }

    /// One value another client wrote under the prefix is a miss for its key; the others of the
    /// batch come back (a single read reports it as `.decodingFailed`: RedisCacheTierTests).
    func testAForeignValueIsAMissInABatchAndTheOtherKeysComeBack() async throws {
        try await tier.setValue("one", forKey: "a", ttl: nil)
        try await tier.setValue("two", forKey: "b", ttl: nil)
        _ = try server.cli(["SET", "app:foreign", "not ours"])
        let entries = try await tier.entries(forKeys: ["a", "foreign", "b", "missing"])
        XCTAssertEqual(entries.map { $0?.value }, ["one", nil, "two", nil])
    }

    /// The fencing counter expires (a day after the key's last lock attempt); the next token is
    /// still larger than every earlier one, as `RedisLock.fencingToken` promises.
    func testFencingTokensKeepGrowingAfterTheCounterExpires() async throws {
        let firstLock = try await tier.acquireLock(forKey: "job", ttl: .seconds(30))
        let first = try XCTUnwrap(firstLock)
        try await tier.releaseLock(first)
        let secondLock = try await tier.acquireLock(forKey: "job", ttl: .seconds(30))
        let second = try XCTUnwrap(secondLock)
        XCTAssertEqual(second.fencingToken, first.fencingToken + 1)
        try await tier.releaseLock(second)
        _ = try server.cli(["DEL", "{app:job}:fence"])  // what its expiry does
        let thirdLock = try await tier.acquireLock(forKey: "job", ttl: .seconds(30))
        let third = try XCTUnwrap(thirdLock)
        XCTAssertGreaterThan(third.fencingToken, second.fencingToken)
        try await tier.releaseLock(third)
    }

    /// A lock time to live meant as "forever" does not trap in the counter's lifetime.
    func testALockTimeToLiveOfAnyLengthIsAccepted() async throws {
        let acquired = try await tier.acquireLock(forKey: "forever", ttl: .seconds(Int64.max))
        let lock = try XCTUnwrap(acquired)
        try await tier.releaseLock(lock)
        XCTAssertEqual(RedisTierEngine.fenceLifetimeMilliseconds(forLockTTL: .seconds(Int64.max)), Int64.max / 2)
        XCTAssertEqual(RedisTierEngine.fenceLifetimeMilliseconds(forLockTTL: .seconds(1)), 86_400_000)
    }
}
#endif  // Redis
