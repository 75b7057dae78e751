#if Redis
import NIOCore
@testable import StashRedis

/// `FuzzRedisCluster`: what a Redis Cluster client reads from its nodes. The input is read two
/// ways: as the text of an error reply (a `MOVED`/`ASK` redirection), and as a RESP reply to
/// `CLUSTER SLOTS`.
///
/// Properties: a redirection names a slot within 0..<16384, and written back as Redis writes it
/// (`MOVED 3999 127.0.0.1:6381`) reads as the same redirection; a `CLUSTER SLOTS` reply builds a
/// topology or throws `.unexpectedReply`, and every slot it assigns maps to one of its primaries.
package enum RedisClusterCheck {
    package static func check(_ bytes: [UInt8]) throws(PropertyViolation) {
        let text = String(decoding: bytes, as: UTF8.self)
        let redirection = RedisClusterClient.Redirection(RedisError(.serverError, text))
        switch redirection {
        case .moved(let slot, let node):
            guard (0..<RedisKeySlot.count).contains(slot.rawValue),
                  RedisClusterClient.Redirection(RedisError(.serverError, "MOVED \(slot.rawValue) \(node)")) == redirection else {
                throw PropertyViolation("\(text.debugDescription) reads as \(redirection), which does not survive being written back")
            }
        case .ask(let node):
            guard RedisClusterClient.Redirection(RedisError(.serverError, "ASK 0 \(node)")) == redirection else {
                throw PropertyViolation("\(text.debugDescription) reads as \(redirection), which does not survive being written back")
            }
        case .retryAfterRefresh, .none:
            break
        }

        var parser = RESPParser(maximumBulkLength: 4096, maximumArrayCount: 4096, maximumDepth: 8, maximumLineLength: 256)
        var buffer = ByteBuffer(bytes: bytes)
        guard let reply = try? parser.parse(&buffer) else { return }
        do {
            let topology = try RedisClusterTopology(clusterSlots: reply, defaultHost: "seed")
            for slot in 0..<RedisKeySlot.count {
                if let node = topology.primary(for: RedisKeySlot(rawValue: slot)), !topology.primaries.contains(node) {
                    throw PropertyViolation("slot \(slot) maps to \(node), not a primary")
                }
            }
        } catch let error as RedisError {
            guard error.code == .unexpectedReply else { throw PropertyViolation("CLUSTER SLOTS threw \(error)") }
        } catch {
            throw error as! PropertyViolation
        }
    }
}
#endif  // Redis
