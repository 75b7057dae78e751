#if Redis
import Foundation
import Stash
import StashTestSupport
import Testing
@testable import StashRedis

extension RedisSuites {
    /// What a tier does with what it did not write itself, or no longer finds: a foreign value in a
    /// batch read, and a fencing counter that expired.
    @Suite(.requiresRedisServer, .timeLimit(.minutes(5))) final class RedisCacheTierDamageTests {
        /// The test's own server, stopped at deinit (whether the test passed, failed or threw).
        private let server: RedisServerProcess
        private let client: RedisClient
        private let tier: RedisCacheTier<String>

        init() throws {
            try RedisRequirement.requireServer()
            server = try RedisServerProcess.start()
            client = RedisClient(configuration: RedisConfiguration(host: "127.0.0.1", port: server.port))
            tier = RedisCacheTier(executor: client, codec: .string, configuration: .init(keyPrefix: "app:"))
        }

        deinit {
            server.stop()
        }

        /// Runs a test's body, then closes the tier and the client, whether the body returned or threw.
        private func closing(after body: () async throws -> Void) async throws {
            try await run(body) { await tier.close(); await client.close() }
        }

        /// One value another client wrote under the prefix is a miss for its key; the others of the
        /// batch come back (a single read reports it as `.decodingFailed`: RedisCacheTierTests).
        @Test func aForeignValueIsAMissInABatchAndTheOtherKeysComeBack() async throws {
            try await closing {
                try await tier.setValue("one", forKey: "a", ttl: nil)
                try await tier.setValue("two", forKey: "b", ttl: nil)
                _ = try server.cli(["SET", "app:foreign", "not ours"])
                let entries = try await tier.entries(forKeys: ["a", "foreign", "b", "missing"])
                #expect(entries.map { $0?.value } == ["one", nil, "two", nil])
            }
        }

        /// The fencing counter expires (a day after the key's last lock attempt); the next token is
        /// still larger than every earlier one, as `RedisLock.fencingToken` promises.
        @Test func fencingTokensKeepGrowingAfterTheCounterExpires() async throws {
            try await closing {
                let first = try #require(try await tier.acquireLock(forKey: "job", ttl: .seconds(30)))
                try await tier.releaseLock(first)
                let second = try #require(try await tier.acquireLock(forKey: "job", ttl: .seconds(30)))
                #expect(second.fencingToken == first.fencingToken + 1)
                try await tier.releaseLock(second)
                _ = try server.cli(["DEL", "{app:job}:fence"])  // what its expiry does
                let third = try #require(try await tier.acquireLock(forKey: "job", ttl: .seconds(30)))
                #expect(third.fencingToken > second.fencingToken)
                try await tier.releaseLock(third)
            }
        }

        /// A lock time to live meant as "forever" does not trap in the counter's lifetime.
        @Test func aLockTimeToLiveOfAnyLengthIsAccepted() async throws {
            try await closing {
                let lock = try #require(try await tier.acquireLock(forKey: "forever", ttl: .seconds(Int64.max)))
                try await tier.releaseLock(lock)
                #expect(RedisTierEngine.fenceLifetimeMilliseconds(forLockTTL: .seconds(Int64.max)) == Int64.max / 2)
                #expect(RedisTierEngine.fenceLifetimeMilliseconds(forLockTTL: .seconds(1)) == 86_400_000)
            }
        }
    }
}
#endif  // Redis
