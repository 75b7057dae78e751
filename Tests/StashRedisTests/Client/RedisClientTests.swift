#if Redis
import Foundation
import NIOCore
import NIOPosix
import Testing
@testable import StashRedis

extension RedisSuites {
    @Suite(.requiresRedisServer, .timeLimit(.minutes(5))) final class RedisClientTests {
        /// The test's own server, stopped at deinit (whether the test passed, failed or threw).
        private let server: RedisServerProcess

        init() throws {
            try RedisRequirement.requireServer()
            server = try RedisServerProcess.start()
        }

        deinit {
            server.stop()
        }

        private func makeClient(_ change: (inout RedisConfiguration) -> Void = { _ in }) -> RedisClient {
            var configuration = RedisConfiguration(host: "127.0.0.1", port: server.port)
            change(&configuration)
            return RedisClient(configuration: configuration)
        }

        @Test func setGetDeleteAndMGet() async throws {
            let client = makeClient()
            try await client.set("a", to: ByteBuffer(string: "1"))
            try await client.set("b", to: ByteBuffer(bytes: [0, 13, 10, 255]))
            let actual2 = try await client.get("a")
            #expect(actual2 == ByteBuffer(string: "1"))
            let actual3 = try await client.mget(["a", "b", "missing"])
            #expect(actual3 == [ByteBuffer(string: "1"), ByteBuffer(bytes: [0, 13, 10, 255]), nil])
            let actual4 = try await client.delete(["a"])
            #expect(actual4 == 1)
            let actual5 = try await client.unlink(["b", "missing"])
            #expect(actual5 == 1)
            let actual6 = try await client.get("a")
            #expect(actual6 == nil)
            await client.close()
        }

        @Test func expiryIsRedisOwn() async throws {
            let client = makeClient()
            try await client.set("t", to: ByteBuffer(string: "v"), ttl: .seconds(100))
            let remaining = try await client.remainingTimeToLive("t")
            #expect(remaining.flatMap { $0 } != nil)
            #expect(remaining!! <= .seconds(100))
            #expect(remaining!! > .seconds(90))
            let actual7 = try await client.expire("t", ttl: .seconds(5))
            #expect(actual7)
            let shortened = try await client.remainingTimeToLive("t")
            #expect(shortened!! <= .seconds(5))
            try await client.set("forever", to: ByteBuffer(string: "v"))
            let actual8 = try await client.remainingTimeToLive("forever").map { $0 == nil }
            #expect(actual8 == true)
            let actual9 = try await client.remainingTimeToLive("nothing")
            #expect(actual9 == nil, "a missing key has no time to live")
            await client.close()
        }

        @Test func scriptsRunByShaAfterTheFirstEval() async throws {
            let client = makeClient()
            let script = RedisScript("return tonumber(ARGV[1]) + 1")
            let actual10 = try await client.run(script, keys: [], arguments: [.integer(41)])
            #expect(actual10 == .integer(42))
            let exists = try await client.send(RedisCommand("SCRIPT", ["EXISTS", .string(script.sha1)]))
            #expect(exists == .array([.integer(1)]), "EVAL loaded the script under the digest we computed")
            let actual11 = try await client.run(script, keys: [], arguments: [.integer(1)])
            #expect(actual11 == .integer(2))
            await client.close()
        }

        @Test func sha1MatchesKnownDigests() {
            #expect(RedisScript("abc").sha1 == "a9993e364706816aba3e25717850c26c9cd0d89d")
            #expect(RedisScript("").sha1 == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
            #expect(RedisScript(String(repeating: "a", count: 1000)).sha1 == "291e9a6c66994949b57ba5e650361e98fc36b1ba")
        }

        @Test func scanVisitsEveryMatchingKey() async throws {
            let client = makeClient()
            for index in 0..<250 { try await client.set("scan:\(index)", to: ByteBuffer(string: "x")) }
            try await client.set("other", to: ByteBuffer(string: "x"))
            var seen = Set<String>()
            try await client.scan(matching: "scan:*", count: 50) { keys in seen.formUnion(keys) }
            #expect(seen == Set((0..<250).map { "scan:\($0)" }))
            await client.close()
        }

        @Test func selectChoosesTheDatabase() async throws {
            let two = makeClient { $0.database = 2 }
            let zero = makeClient()
            try await two.set("db", to: ByteBuffer(string: "two"))
            let actual12 = try await zero.get("db")
            #expect(actual12 == nil)
            #expect(try server.cli(["-n", "2", "GET", "db"]).trimmingCharacters(in: .whitespacesAndNewlines) == "two")
            await two.close()
            await zero.close()
        }

        /// Connections speak RESP3 where the server offers it (Redis 6 and later), or
        /// RESP2 when asked to; replies read the same under both.
        @Test func resp3WhereOfferedAndRepliesReadTheSameUnderBoth() async throws {
            let three = makeClient(), two = makeClient { $0.usesRESP3 = false }
            _ = try await three.send(RedisCommand("HSET", key: "h", ["h", "f", "v"]))
            for (client, version) in [(three, "resp=3"), (two, "resp=2")] {
                let info = try await client.send(RedisCommand("CLIENT", ["INFO"])).string ?? ""
                #expect(info.contains(version), "\(info)")
                // A script's booleans, a map, a missing key.
                let no = try await client.send(RedisCommand("EVAL", ["return false", "0"]))
                #expect(no == .null)
                let yes = try await client.send(RedisCommand("EVAL", ["return true", "0"]))
                #expect(yes == .integer(1))
                let hash = try await client.send(RedisCommand("HGETALL", key: "h", ["h"]))
                #expect(hash.elements?.compactMap(\.string) == ["f", "v"])
                let missing = try await client.get("missing")
                #expect(missing == nil)
            }
            await three.close()
            await two.close()
        }

        @Test func authWithUserAndPassword() async throws {
            try server.cli(["ACL", "SETUSER", "app", "on", ">s3cret", "~*", "+@all"])
            let good = makeClient { $0.username = "app"; $0.password = "s3cret" }
            try await good.set("k", to: ByteBuffer(string: "v"))
            let actual13 = try await good.get("k")
            #expect(actual13 == ByteBuffer(string: "v"))
            let bad = makeClient { $0.username = "app"; $0.password = "wrong" }
            do {
                _ = try await bad.get("k")
                Issue.record("a wrong password must fail")
            } catch {
                #expect(error.code == .serverError)
                #expect(error.message.contains("WRONGPASS"), "\(error.message)")
            }
            await good.close()
            await bad.close()
        }

        @Test func aRefusedConnectFailsThenBacksOff() async throws {
            let port = server.port
            server.stop()
            let client = RedisClient(configuration: {
                var configuration = RedisConfiguration(host: "127.0.0.1", port: port)
                configuration.poolSize = 1
                configuration.initialReconnectDelay = .seconds(60)
                return configuration
            }())
            do {
                _ = try await client.get("k")
                Issue.record("nothing listens")
            } catch {
                #expect(error.code == .connectionFailed)
            }
            do {
                _ = try await client.get("k")
                Issue.record("still nothing listens")
            } catch {
                #expect(error.code == .unavailable, "the second call fails fast while the slot backs off")
            }
            await client.close()
        }

        /// A paused server answers nothing: the command times out and the connection is replaced.
        @Test func aCommandPastItsTimeoutFails() async throws {
            let client = makeClient { $0.commandTimeout = .milliseconds(200); $0.poolSize = 1 }
            try await client.set("k", to: ByteBuffer(string: "v"))
            try server.cli(["CLIENT", "PAUSE", "1500", "ALL"])
            do {
                _ = try await client.get("k")
                Issue.record("the server is paused")
            } catch {
                #expect(error.code == .timeout)
            }
            await client.close()
        }

        /// A pipeline's outcomes come back in order, and an error reply fails only its own command.
        @Test func aPipelineAnswersInOrderWithErrorsPerCommand() async throws {
            let client = makeClient()
            let results = await client.send(pipeline: [
                RedisCommand("SET", key: "n", ["n", "41"]),
                RedisCommand("INCR", key: "n", ["n"]),
                RedisCommand("LPUSH", key: "n", ["n", "x"]),
                RedisCommand("GET", key: "n", ["n"]),
                RedisCommand("GET", key: "missing", ["missing"]),
            ])
            #expect(results.count == 5)
            #expect(try results[0].get() == .simpleString("OK"))
            #expect(try results[1].get() == .integer(42))
            let error = #expect(throws: (any Error).self) { try results[2].get() }
            let description = error.map { "\($0)" } ?? ""
            #expect((error as? RedisError)?.code == .serverError)
            #expect(description.contains("WRONGTYPE"), "\(description)")
            #expect(try results[3].get().string == "42")
            #expect(try results[4].get() == .null)
            let none = await client.send(pipeline: [])
            #expect(none.isEmpty)
            await client.close()
        }

        /// The command timeout applies to every command of a pipeline.
        @Test func aPipelinePastItsTimeoutFailsEveryCommand() async throws {
            let client = makeClient { $0.commandTimeout = .milliseconds(200); $0.poolSize = 1 }
            try await client.set("k", to: ByteBuffer(string: "v"))
            try server.cli(["CLIENT", "PAUSE", "1500", "ALL"])
            let results = await client.send(pipeline: [RedisCommand("GET", key: "k", ["k"]), RedisCommand("GET", key: "k", ["k"])])
            #expect(results.map { result -> RedisError.Code? in
                if case .failure(let error) = result { return error.code }
                return nil
            } == [.timeout, .timeout])
            await client.close()
        }
    }
}
#endif  // Redis
