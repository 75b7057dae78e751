#if Redis && Hummingbird
import Hummingbird
import StashHummingbird
import StashTestSupport
import Testing
@testable import Stash
@testable import StashRedis

extension RedisSuites {
    /// `StashPersistDriver` on a `Cache` with a Redis tier: two drivers, each on its own cache (as
    /// two servers of a fleet), sharing one real redis-server.
    @Suite(.requiresRedisServer, .timeLimit(.minutes(5))) final class PersistDriverWithRedisTests {
        private let server: RedisServerProcess
        private let caches: SharedRedisCaches

        init() throws {
            try RedisRequirement.requireServer()
            server = try RedisServerProcess.start()
            caches = SharedRedisCaches(server: server, prefix: "persist:")
        }

        deinit {
            server.stop()
        }

        /// 100 concurrent `create`s of one key, half through each driver: exactly one succeeds
        /// across the fleet, the others throw `PersistError.duplicate`, and both drivers read the
        /// winner's value. Removed through one driver, the key is gone for the other, which may
        /// then create it.
        @Test func createIsAtomicAcrossTheFleet() async throws {
            try await run({ [caches] in
                let a = try caches.make(codec: .jsonRecord), b = try caches.make(codec: .jsonRecord)
                await a.waitUntilReceivingInvalidations()
                await b.waitUntilReceivingInvalidations()
                let first = StashPersistDriver(cache: a), second = StashPersistDriver(cache: b)
                let winners = try await withThrowingTaskGroup(of: Int?.self) { group in
                    for index in 0..<100 {
                        let driver = index % 2 == 0 ? first : second
                        group.addTask {
                            do {
                                try await driver.create(key: "claim", value: index, expires: .seconds(60))
                                return index
                            } catch let error as PersistError where error == .duplicate {
                                return nil
                            }
                        }
                    }
                    var winners: [Int] = []
                    for try await winner in group { if let winner { winners.append(winner) } }
                    return winners
                }
                #expect(winners.count == 1)
                #expect(try await first.get(key: "claim", as: Int.self) == winners.first)
                #expect(try await second.get(key: "claim", as: Int.self) == winners.first)

                let appliedByB = b.recordAppliedInvalidations()
                try await first.remove(key: "claim")
                try await appliedByB.wait(for: .key("claim"))
                #expect(try await second.get(key: "claim", as: Int.self) == nil)
                try await second.create(key: "claim", value: 1000, expires: nil)
                #expect(try await first.get(key: "claim", as: Int.self) == 1000)
            }, thenClose: { await caches.close() })
        }
    }
}
#endif  // Redis && Hummingbird
