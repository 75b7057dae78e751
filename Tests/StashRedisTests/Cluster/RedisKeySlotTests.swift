#if Redis
import NIOCore
import Testing
@testable import StashRedis

extension RedisSuites {
    @Suite(.timeLimit(.minutes(5))) struct RedisKeySlotTests {
        @Test func crc16MatchesTheSpecification() {
            // The Redis Cluster specification's test vector: CRC16 of "123456789" is 0x31C3.
            #expect(RedisKeySlot.crc16(Array("123456789".utf8)) == 0x31C3)
            #expect(RedisKeySlot(key: "123456789").rawValue == 0x31C3 & 0x3FFF)
            // Slots Redis itself reports (CLUSTER KEYSLOT).
            #expect(RedisKeySlot(key: "foo").rawValue == 12182)
            #expect(RedisKeySlot(key: "bar").rawValue == 5061)
            #expect(RedisKeySlot(key: "").rawValue == 0)
        }

        @Test func hashTags() {
            #expect(RedisKeySlot(key: "{user1000}.following") == RedisKeySlot(key: "{user1000}.followers"))
            #expect(RedisKeySlot(key: "{user1000}.following") == RedisKeySlot(key: "user1000"))
            // An empty tag hashes the whole key; only the first tag counts.
            #expect(RedisKeySlot(key: "foo{}{bar}") == RedisKeySlot(key: "foo{}{bar}"))
            #expect(RedisKeySlot(key: "foo{}{bar}") != RedisKeySlot(key: "bar"))
            #expect(RedisKeySlot(key: "foo{{bar}}zap") == RedisKeySlot(key: "{bar"))
            #expect(RedisKeySlot(key: "foo{bar}{zap}") == RedisKeySlot(key: "bar"))
        }

        @Test func topologyParsesClusterSlots() throws {
            func node(_ host: String, _ port: Int64) -> RESPValue {
                .array([.bulkString(ByteBuffer(string: host)), .integer(port), .bulkString(ByteBuffer(string: "id"))])
            }
            let reply = RESPValue.array([
                .array([.integer(0), .integer(5460), node("127.0.0.1", 7000), node("127.0.0.1", 7003)]),
                .array([.integer(5461), .integer(16383), node("", 7001)]),
            ])
            let topology = try RedisClusterTopology(clusterSlots: reply, defaultHost: "10.1.1.1")
            #expect(topology.primary(for: RedisKeySlot(rawValue: 0))?.port == 7000)
            #expect(topology.primary(for: RedisKeySlot(rawValue: 5460))?.port == 7000)
            #expect(topology.primary(for: RedisKeySlot(rawValue: 5461)) == .init(host: "10.1.1.1", port: 7001))
            #expect(topology.primaries.count == 2)
            #expect(throws: (any Error).self) { try RedisClusterTopology(clusterSlots: .array([.array([.integer(5), .integer(2), node("a", 1)])]), defaultHost: "h") }
            #expect(throws: (any Error).self) { try RedisClusterTopology(clusterSlots: .integer(3), defaultHost: "h") }
        }

        @Test func redirectionsParse() {
            typealias R = RedisClusterClient.Redirection
            #expect(R(RedisError(.serverError, "MOVED 3999 127.0.0.1:6381")) == .moved(RedisKeySlot(rawValue: 3999), .init(host: "127.0.0.1", port: 6381)))
            #expect(R(RedisError(.serverError, "ASK 3999 ::1:6381")) == .ask(.init(host: "::1", port: 6381)))
            #expect(R(RedisError(.serverError, "MOVED 99999 h:1")) == .none)
            #expect(R(RedisError(.serverError, "TRYAGAIN Multiple keys")) == .retryAfterRefresh)
            #expect(R(RedisError(.connectionFailed, "refused")) == .retryAfterRefresh)
            #expect(R(RedisError(.serverError, "WRONGTYPE")) == .none)
        }
    }
}
#endif  // Redis
