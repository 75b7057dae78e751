#if Redis
import Foundation
import Logging
import NIOCore
import Stash
@testable import StashRedis

/// `FuzzRedisValueHeader`: the header the Redis tier puts before every value it stores
/// (marker, version, absolute expiry). The first 8 bytes are the clock (Unix milliseconds), the
/// rest is the stored value as read from Redis.
///
/// Properties: `decodeHeader` throws `.decodingFailed` for a value without the header, returns
/// `nil` for an expired one, or returns the bytes after the header and a positive time to live
/// equal to the expiry minus now; a value written by `writePayload` reads back the same.
package enum RedisValueHeaderCheck {
    /// An executor that is never called: the header is decoded without Redis.
    struct NoExecutor: RedisCommandExecutor {
        func send(_ command: RedisCommand) async throws(RedisError) -> RESPValue {
            throw RedisError(.unavailable, "no Redis in the fuzz check")
        }
        func send(pipeline commands: [RedisCommand]) async -> [Result<RESPValue, RedisError>] {
            commands.map { _ in .failure(RedisError(.unavailable, "no Redis in the fuzz check")) }
        }
        func primaryClients() async throws(RedisError) -> [RedisClient] { [] }
    }

    static let engine = RedisTierEngine(
        executor: NoExecutor(), keyPrefix: "", channel: "c", publishesInvalidations: false,
        maximumValueSize: 1 << 20, failureThreshold: 1, openDuration: .seconds(1), subscribeOn: nil,
        clock: ManualClock(), wallClock: ManualClock(), logger: Logger(label: "fuzz", factory: { _ in SwiftLogNoOpLogHandler() }))

    package static func check(_ bytes: [UInt8]) throws(PropertyViolation) {
        var reader = bytes[...]
        var now: Int64 = 0
        for index in 0..<8 { now |= Int64(reader.popFirst() ?? 0) << (8 * index) }
        let stored = ByteBuffer(bytes: reader)
        try checkDecode(stored, now: now)
        // Written by the tier, then read back.
        guard stored.readableBytes >= 8, let expiresAt = stored.getInteger(at: stored.readerIndex, as: Int64.self) else { return }
        var written = ByteBuffer()
        let payload = Data(reader.dropFirst(8))
        var expiry = try? RedisTierEngine.Expiry(nil, key: "k", wallClock: ManualClock())
        expiry?.expiresAtMilliseconds = expiresAt
        guard let expiry else { throw PropertyViolation("no expiry for no time to live") }
        engine.writePayload(payload, expiry: expiry, into: &written)
        try checkDecode(written, now: now)
        if let value = try? decode(written, now: now), value.bytes != payload {
            throw PropertyViolation("the payload does not read back")
        }
    }

    static func checkDecode(_ stored: ByteBuffer, now: Int64) throws(PropertyViolation) {
        let hasHeader = stored.readableBytes >= RedisTierEngine.headerSize
            && stored.getInteger(at: stored.readerIndex, as: UInt8.self) == RedisTierEngine.formatMarker
            && stored.getInteger(at: stored.readerIndex + 1, as: UInt8.self) == RedisTierEngine.formatVersion
        let expiresAt = hasHeader ? stored.getInteger(at: stored.readerIndex + 2, as: Int64.self)! : 0
        // The remaining time saturates (an expiry far in the past is expired, not an overflow:
        // Fuzzing/FailCases/FuzzRedisValueHeader/crash-expiry-int64-min once trapped here).
        let (difference, overflow) = expiresAt.subtractingReportingOverflow(now)
        let remaining = overflow ? (now > 0 ? Int64.min : Int64.max) : difference
        do {
            let value = try decode(stored, now: now)
            guard hasHeader else { throw PropertyViolation("a value without the header decoded") }
            if let value {
                guard value.bytes == Data(stored.readableBytesView.dropFirst(RedisTierEngine.headerSize)) else {
                    throw PropertyViolation("the bytes after the header differ")
                }
                if expiresAt == 0 {
                    guard value.ttl == nil else { throw PropertyViolation("no expiry, yet a time to live") }
                } else {
                    guard let ttl = value.ttl, ttl > .zero, ttl == .milliseconds(remaining) else {
                        throw PropertyViolation("time to live \(String(describing: value.ttl)) for expiry \(expiresAt) at \(now)")
                    }
                }
            } else {
                guard expiresAt != 0, remaining <= 0 else { throw PropertyViolation("an unexpired value read as expired") }
            }
        } catch let error as RedisError {
            guard !hasHeader, error.code == .decodingFailed else { throw PropertyViolation("unexpected error \(error)") }
        } catch {
            throw error as! PropertyViolation
        }
    }

    static func decode(_ stored: ByteBuffer, now: Int64) throws -> RedisTierEngine.StoredValue? {
        try engine.decodeHeader(stored, key: "k", nowMilliseconds: now)
    }
}
#endif  // Redis
