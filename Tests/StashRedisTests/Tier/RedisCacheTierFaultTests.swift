#if Redis
import Foundation
import NIOCore
import Stash
import StashTestSupport
import Testing
@testable import StashRedis

extension RedisSuites {
    /// Redis killed and restarted under a running tier: calls fail fast, the outage
    /// is logged once, and the tier recovers when Redis is back.
    @Suite(.requiresRedisServer, .timeLimit(.minutes(5))) struct RedisCacheTierFaultTests {
        @Test func redisKilledAndRestartedInTheMiddleOfALoad() async throws {
            try RedisRequirement.requireServer()
            let server = try RedisServerProcess.start()
            defer { server.stop() }
            let client = RedisClient(configuration: server.faultTestConfiguration)
            let clock = ManualClock()
            let logs = LogRecorder(), logger = logs.logger
            var tierConfiguration = RedisCacheTier<String>.Configuration()
            tierConfiguration.failureThreshold = 3
            tierConfiguration.openDuration = .seconds(5)
            let tier = RedisCacheTier(executor: client, codec: .string, configuration: tierConfiguration, clock: clock, logger: logger)
            let heard = InvalidationRecorder()
            try await tier.startReceivingInvalidations(heard.handler)

            // A load in progress: the first half of the keys reach Redis.
            for index in 0..<50 { try await tier.setValue("v\(index)", forKey: "k\(index)", ttl: .seconds(60)) }
            server.kill()

            var failures: [RedisError.Code] = []
            for index in 50..<100 {
                do {
                    try await tier.setValue("v\(index)", forKey: "k\(index)", ttl: .seconds(60))
                } catch {
                    failures.append(error.code)
                }
            }
            #expect(failures.count == 50, "no write succeeds while Redis is down")
            #expect(tier.engine.breaker.phase == .open)
            #expect(failures.suffix(47).allSatisfy { $0 == .unavailable }, "after the threshold, calls fail fast: \(failures)")
            #expect(logs.messages(at: .debug).filter { $0.contains("circuit breaker opened") }.count == 1, "the outage is noted once, not per call")

            try server.launch()
            // Still open until the cool-down passes on the injected clock.
            do {
                _ = try await tier.entry(forKey: "k1")
                Issue.record("the breaker is open")
            } catch {
                #expect(error.code == .unavailable)
            }
            clock.advance(by: .seconds(5))
            // The restarted server lost everything (no persistence): a miss, not an error.
            let afterRestart = try await tier.entry(forKey: "k1")
            #expect(afterRestart == nil)
            #expect(tier.engine.breaker.phase == .closed)
            for index in 50..<100 { try await tier.setValue("v\(index)", forKey: "k\(index)", ttl: .seconds(60)) }
            let reloaded = try await tier.entry(forKey: "k99")
            #expect(reloaded?.value == "v99")
            // The subscription came back, and says that anything may have changed meanwhile.
            try await heard.wait(for: .all)
            await tier.close()
            await client.close()
        }
    }
}
#endif  // Redis
