#if Redis
import NIOCore
import XCTest
@testable import StashRedis

final class RedisKeySlotTests: XCTestCase {
    func testCRC16MatchesTheSpecification() {
        // The Redis Cluster specification's test vector: CRC16 of "123456789" is 0x31C3.
        XCTAssertEqual(RedisKeySlot.crc16(Array("123456789".utf8)), 0x31C3)
        XCTAssertEqual(RedisKeySlot(key: "123456789").rawValue, 0x31C3 & 0x3FFF)
        // Slots Redis itself reports (CLUSTER KEYSLOT).
        XCTAssertEqual(RedisKeySlot(key: "foo").rawValue, 12182)
        XCTAssertEqual(RedisKeySlot(key: "bar").rawValue, 5061)
        XCTAssertEqual(RedisKeySlot(key: "").rawValue, 0)
    }

    func testHashTags() {
        XCTAssertEqual(RedisKeySlot(key: "{user1000}.following"), RedisKeySlot(key: "{user1000}.followers"))
        XCTAssertEqual(RedisKeySlot(key: "{user1000}.following"), RedisKeySlot(key: "user1000"))
        // An empty tag hashes the whole key; only the first tag counts.
        XCTAssertEqual(RedisKeySlot(key: "foo{}{bar}"), RedisKeySlot(key: "foo{}{bar}"))
        XCTAssertNotEqual(RedisKeySlot(key: "foo{}{bar}"), RedisKeySlot(key: "bar"))
        XCTAssertEqual(RedisKeySlot(key: "foo{{bar}}zap"), RedisKeySlot(key: "{bar"))
        XCTAssertEqual(RedisKeySlot(key: "foo{bar}{zap}"), RedisKeySlot(key: "bar"))
    }

    func testTopologyParsesClusterSlots() throws {
        func node(_ host: String, _ port: Int64) -> RESPValue {
            .array([.bulkString(ByteBuffer(string: host)), .integer(port), .bulkString(ByteBuffer(string: "id"))])
        }
        let reply = RESPValue.array([
            .array([.integer(0), .integer(5460), node("127.0.0.1", 7000), node("127.0.0.1", 7003)]),
            .array([.integer(5461), .integer(16383), node("", 7001)]),
        ])
        let topology = try RedisClusterTopology(clusterSlots: reply, defaultHost: "10.1.1.1")
        XCTAssertEqual(topology.primary(for: RedisKeySlot(rawValue: 0))?.port, 7000)
        XCTAssertEqual(topology.primary(for: RedisKeySlot(rawValue: 5460))?.port, 7000)
        XCTAssertEqual(topology.primary(for: RedisKeySlot(rawValue: 5461)), .init(host: "10.1.1.1", port: 7001))
        XCTAssertEqual(topology.primaries.count, 2)
        XCTAssertThrowsError(try RedisClusterTopology(clusterSlots: .array([.array([.integer(5), .integer(2), node("a", 1)])]), defaultHost: "h"))
        XCTAssertThrowsError(try RedisClusterTopology(clusterSlots: .integer(3), defaultHost: "h"))
    }

    func testRedirectionsParse() {
        typealias R = RedisClusterClient.Redirection
        XCTAssertEqual(R(RedisError(.serverError, "MOVED 3999 127.0.0.1:6381")), .moved(RedisKeySlot(rawValue: 3999), .init(host: "127.0.0.1", port: 6381)))
        XCTAssertEqual(R(RedisError(.serverError, "ASK 3999 ::1:6381")), .ask(.init(host: "::1", port: 6381)))
        XCTAssertEqual(R(RedisError(.serverError, "MOVED 99999 h:1")), .none)
        XCTAssertEqual(R(RedisError(.serverError, "TRYAGAIN Multiple keys")), .retryAfterRefresh)
        XCTAssertEqual(R(RedisError(.connectionFailed, "refused")), .retryAfterRefresh)
        XCTAssertEqual(R(RedisError(.serverError, "WRONGTYPE")), .none)
    }
}
#endif  // Redis
