#if Redis
import NIOCore
import Stash
import Testing
@testable import StashRedis

extension RedisSuites {
    /// Many tasks on few connections: replies reach their own callers, and the
    /// breaker's counts hold under contention. Run under the thread sanitizer in CI.
    @Suite(.timeLimit(.minutes(5))) struct RedisClientConcurrencyTests {
        @Test(.requiresRedisServer) func concurrentCallersGetTheirOwnReplies() async throws {
            try RedisRequirement.requireServer()
            let server = try RedisServerProcess.start()
            defer { server.stop() }
            var configuration = RedisConfiguration(host: "127.0.0.1", port: server.port)
            configuration.poolSize = 2
            let client = RedisClient(configuration: configuration)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<500 {
                    group.addTask {
                        let key = "key\(index)"
                        try await client.set(key, to: ByteBuffer(string: "value\(index)"))
                        let value = try await client.get(key)
                        #expect(value.map { String(buffer: $0) } == "value\(index)")
                    }
                }
                try await group.waitForAll()
            }
            let results = await client.send(pipeline: (0..<100).map { RedisCommand("GET", key: "key\($0)", [.string("key\($0)")]) })
            #expect(results.map { try? $0.get().string } == (0..<100).map { "value\($0)" })
            await client.close()
        }

        @Test func theBreakerOpensOnceUnderConcurrentFailures() async {
            let clock = ManualClock()
            let logs = LogRecorder(), logger = logs.logger
            let breaker = RedisCircuitBreaker(failureThreshold: 5, openDuration: .seconds(1), clock: clock, logger: logger)
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<200 {
                    group.addTask {
                        if breaker.allowsCall() { breaker.recordFailure(RedisError(.timeout, "slow")) }
                    }
                }
            }
            #expect(breaker.phase == .open)
            #expect(logs.messages(at: .debug).filter { $0.contains("circuit breaker opened") }.count == 1)
            clock.advance(by: .seconds(1))
            let probes = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<100 { group.addTask { breaker.allowsCall() } }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(probes == 1, "exactly one probe when half-open")
        }
    }
}
#endif  // Redis
