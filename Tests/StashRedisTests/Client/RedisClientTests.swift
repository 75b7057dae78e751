#if Redis
import Foundation
import NIOCore
import NIOPosix
import XCTest
@testable import StashRedis

final class RedisClientTests: RedisServerTestCase {
    private func makeClient(_ change: (inout RedisConfiguration) -> Void = { _ in }) -> RedisClient {
        var configuration = RedisConfiguration(host: "127.0.0.1", port: server.port)
        change(&configuration)
        return RedisClient(configuration: configuration)
    }

    func testSetGetDeleteAndMGet() async throws {
        let client = makeClient()
        try await client.set("a", to: ByteBuffer(string: "1"))
        try await client.set("b", to: ByteBuffer(bytes: [0, 13, 10, 255]))
        let actual2 = try await client.get("a")
        XCTAssertEqual(actual2, ByteBuffer(string: "1"))
        let actual3 = try await client.mget(["a", "b", "missing"])
        XCTAssertEqual(actual3, [ByteBuffer(string: "1"), ByteBuffer(bytes: [0, 13, 10, 255]), nil])
        let actual4 = try await client.delete(["a"])
        XCTAssertEqual(actual4, 1)
        let actual5 = try await client.unlink(["b", "missing"])
        XCTAssertEqual(actual5, 1)
        let actual6 = try await client.get("a")
        XCTAssertNil(actual6)
        await client.close()
    }

    func testExpiryIsRedisOwn() async throws {
        let client = makeClient()
        try await client.set("t", to: ByteBuffer(string: "v"), expiringAfter: .seconds(100))
        let remaining = try await client.remainingTimeToLive("t")
        XCTAssertNotNil(remaining.flatMap { $0 })
        XCTAssertLessThanOrEqual(remaining!!, .seconds(100))
        XCTAssertGreaterThan(remaining!!, .seconds(90))
        let actual7 = try await client.expire("t", after: .seconds(5))
        XCTAssertTrue(actual7)
        let shortened = try await client.remainingTimeToLive("t")
        XCTAssertLessThanOrEqual(shortened!!, .seconds(5))
        try await client.set("forever", to: ByteBuffer(string: "v"))
        let actual8 = try await client.remainingTimeToLive("forever").map { $0 == nil }
        XCTAssertEqual(actual8, true)
        let actual9 = try await client.remainingTimeToLive("nothing")
        XCTAssertTrue(actual9 == nil, "a missing key has no time to live")
        await client.close()
    }

    func testScriptsRunByShaAfterTheFirstEval() async throws {
        let client = makeClient()
        let script = RedisScript("return tonumber(ARGV[1]) + 1")
        let actual10 = try await client.run(script, keys: [], arguments: [.integer(41)])
        XCTAssertEqual(actual10, .integer(42))
        let exists = try await client.send(RedisCommand("SCRIPT", ["EXISTS", .string(script.sha1)]))
        XCTAssertEqual(exists, .array([.integer(1)]), "EVAL loaded the script under the digest we computed")
        let actual11 = try await client.run(script, keys: [], arguments: [.integer(1)])
        XCTAssertEqual(actual11, .integer(2))
        await client.close()
    }

    func testSHA1MatchesKnownDigests() {
        XCTAssertEqual(RedisScript("abc").sha1, "a9993e364706816aba3e25717850c26c9cd0d89d")
        XCTAssertEqual(RedisScript("").sha1, "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        XCTAssertEqual(RedisScript(String(repeating: "a", count: 1000)).sha1, "291e9a6c66994949b57ba5e650361e98fc36b1ba")
    }

    func testScanVisitsEveryMatchingKey() async throws {
        let client = makeClient()
        for index in 0..<250 { try await client.set("scan:\(index)", to: ByteBuffer(string: "x")) }
        try await client.set("other", to: ByteBuffer(string: "x"))
        var seen = Set<String>()
        try await client.scan(matching: "scan:*", count: 50) { keys in seen.formUnion(keys) }
        XCTAssertEqual(seen, Set((0..<250).map { "scan:\($0)" }))
        await client.close()
    }

    func testSelectChoosesTheDatabase() async throws {
        let two = makeClient { $0.database = 2 }
        let zero = makeClient()
        try await two.set("db", to: ByteBuffer(string: "two"))
        let actual12 = try await zero.get("db")
        XCTAssertNil(actual12)
        XCTAssertEqual(try server.cli(["-n", "2", "GET", "db"]).trimmingCharacters(in: .whitespacesAndNewlines), "two")
        await two.close()
        await zero.close()
    }

    /// Connections speak RESP3 where the server offers it (Redis 6 and later), or
    /// RESP2 when asked to; replies read the same under both.
    func testRESP3WhereOfferedAndRepliesReadTheSameUnderBoth() async throws {
        let three = makeClient(), two = makeClient { $0.usesRESP3 = false }
        _ = try await three.send(RedisCommand("HSET", key: "h", ["h", "f", "v"]))
        for (client, version) in [(three, "resp=3"), (two, "resp=2")] {
            let info = try await client.send(RedisCommand("CLIENT", ["INFO"])).string ?? ""
            XCTAssertTrue(info.contains(version), info)
            // A script's booleans, a map, a missing key.
            let no = try await client.send(RedisCommand("EVAL", ["return false", "0"]))
            XCTAssertEqual(no, .null)
            let yes = try await client.send(RedisCommand("EVAL", ["return true", "0"]))
            XCTAssertEqual(yes, .integer(1))
            let hash = try await client.send(RedisCommand("HGETALL", key: "h", ["h"]))
            XCTAssertEqual(hash.elements?.compactMap(\.string), ["f", "v"])
            let missing = try await client.get("missing")
            XCTAssertNil(missing)
        }
        await three.close()
        await two.close()
    }

    func testAuthWithUserAndPassword() async throws {
        try server.cli(["ACL", "SETUSER", "app", "on", ">s3cret", "~*", "+@all"])
        let good = makeClient { $0.username = "app"; $0.password = "s3cret" }
        try await good.set("k", to: ByteBuffer(string: "v"))
        let actual13 = try await good.get("k")
        XCTAssertEqual(actual13, ByteBuffer(string: "v"))
        let bad = makeClient { $0.username = "app"; $0.password = "wrong" }
        do {
            _ = try await bad.get("k")
            XCTFail("a wrong password must fail")
        } catch {
            XCTAssertEqual(error.code, .serverError)
            XCTAssertTrue(error.message.contains("WRONGPASS"), error.message)
        }
        await good.close()
        await bad.close()
    }

    func testARefusedConnectFailsThenBacksOff() async throws {
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
            XCTFail("nothing listens")
        } catch {
            XCTAssertEqual(error.code, .connectionFailed)
        }
        do {
            _ = try await client.get("k")
            XCTFail("still nothing listens")
        } catch {
            XCTAssertEqual(error.code, .unavailable, "the second call fails fast while the slot backs off")
        }
        await client.close()
    }

    /// A paused server answers nothing: the command times out and the connection is replaced.
    func testACommandPastItsTimeoutFails() async throws {
        let client = makeClient { $0.commandTimeout = .milliseconds(200); $0.poolSize = 1 }
        try await client.set("k", to: ByteBuffer(string: "v"))
        try server.cli(["CLIENT", "PAUSE", "1500", "ALL"])
        do {
            _ = try await client.get("k")
            XCTFail("the server is paused")
        } catch {
            XCTAssertEqual(error.code, .timeout)
        }
        await client.close()
    }

    /// A pipeline's outcomes come back in order, and an error reply fails only its own command.
    func testAPipelineAnswersInOrderWithErrorsPerCommand() async throws {
        let client = makeClient()
        let results = await client.send(pipeline: [
            RedisCommand("SET", key: "n", ["n", "41"]),
            RedisCommand("INCR", key: "n", ["n"]),
            RedisCommand("LPUSH", key: "n", ["n", "x"]),
            RedisCommand("GET", key: "n", ["n"]),
            RedisCommand("GET", key: "missing", ["missing"]),
        ])
        XCTAssertEqual(results.count, 5)
        XCTAssertEqual(try results[0].get(), .simpleString("OK"))
        XCTAssertEqual(try results[1].get(), .integer(42))
        XCTAssertThrowsError(try results[2].get()) { error in
            XCTAssertEqual((error as? RedisError)?.code, .serverError)
            XCTAssertTrue("\(error)".contains("WRONGTYPE"), "\(error)")
        }
        XCTAssertEqual(try results[3].get().string, "42")
        XCTAssertEqual(try results[4].get(), .null)
        let none = await client.send(pipeline: [])
        XCTAssertTrue(none.isEmpty)
        await client.close()
    }

    /// The command timeout applies to every command of a pipeline.
    func testAPipelinePastItsTimeoutFailsEveryCommand() async throws {
        let client = makeClient { $0.commandTimeout = .milliseconds(200); $0.poolSize = 1 }
        try await client.set("k", to: ByteBuffer(string: "v"))
        try server.cli(["CLIENT", "PAUSE", "1500", "ALL"])
        let results = await client.send(pipeline: [RedisCommand("GET", key: "k", ["k"]), RedisCommand("GET", key: "k", ["k"])])
        XCTAssertEqual(results.map { result -> RedisError.Code? in
            if case .failure(let error) = result { return error.code }
            return nil
        }, [.timeout, .timeout])
        await client.close()
    }
}
#endif  // Redis
