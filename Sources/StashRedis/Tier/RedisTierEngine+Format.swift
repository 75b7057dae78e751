#if Redis
import Foundation
import NIOCore
import Stash

extension RedisTierEngine {
    /// The first byte of every stored value: tells the tier's values from foreign ones.
    static var formatMarker: UInt8 { 0xC5 }
    /// The layout of the header below; bumped when it changes.
    static var formatVersion: UInt8 { 1 }
    /// Marker, version, and the absolute expiry in Unix milliseconds (big-endian `Int64`, 0 for none).
    static var headerSize: Int { 10 }

    /// A stored value with its header read: the codec's bytes and the remaining time to live.
    @usableFromInline
    struct StoredValue: Sendable {
        /// The codec's bytes, copied out of the reply.
        @usableFromInline var bytes: Data
        /// The remaining time to live; `nil` when it never expires.
        @usableFromInline var ttl: Duration?
    }

    /// The expiry of one write: Redis's `PX` and the header's absolute time, both from one clock reading.
    struct Expiry {
        /// `PX`, in whole milliseconds rounded up; `nil` for no expiry.
        var ttlMilliseconds: Int64?
        /// The header's absolute expiry in Unix milliseconds; 0 for none.
        var expiresAtMilliseconds: Int64 = 0

        /// - Throws: `.invalidArgument` when `ttl` is not positive (`key` names the write).
        init(_ ttl: Duration?, key: String, wallClock: any CacheClock) throws(RedisError) {
            guard let ttl else { return }
            guard ttl > .zero else {
                throw RedisError(.invalidArgument, "the time to live for \(key) is not positive: \(ttl)")
            }
            let milliseconds = RedisClient.milliseconds(ttl)
            ttlMilliseconds = milliseconds
            expiresAtMilliseconds = (wallClock.nanosecondsNow / 1_000_000).addingClamped(milliseconds)
        }
    }

    /// Now, in Unix milliseconds.
    func wallMilliseconds() -> Int64 { wallClock.nanosecondsNow / 1_000_000 }

    /// The stored size of `encoded`: the header and the codec's bytes.
    ///
    /// - Throws: `.valueTooLarge` over ``maximumValueSize``.
    func payloadSize(of encoded: Data, key: String) throws(RedisError) -> Int {
        let size = encoded.count + Self.headerSize
        guard size <= maximumValueSize else {
            throw RedisError(.valueTooLarge, "the value for \(key) takes \(encoded.count) bytes, over the limit of \(maximumValueSize)")
        }
        return size
    }

    /// Appends the header and `encoded` to `buffer`, in one write into its storage.
    func writePayload(_ encoded: Data, expiry: Expiry, into buffer: inout ByteBuffer) {
        let size = Self.headerSize + encoded.count
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { space in
            space[0] = Self.formatMarker
            space[1] = Self.formatVersion
            space.storeBytes(of: expiry.expiresAtMilliseconds.bigEndian, toByteOffset: 2, as: Int64.self)
            encoded.withUnsafeBytes { bytes in
                guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
                (space.baseAddress! + Self.headerSize).copyMemory(from: source, byteCount: bytes.count)
            }
            return size
        }
    }

    /// The codec's bytes and remaining time to live in `stored`; `nil` when its expiry
    /// (against `nowMilliseconds`) has passed.
    ///
    /// - Throws: `.decodingFailed` when `stored` does not start with this format's header.
    func decodeHeader(_ stored: ByteBuffer, key: String, nowMilliseconds: Int64) throws(RedisError) -> StoredValue? {
        let start = stored.readerIndex
        guard stored.readableBytes >= Self.headerSize,
              stored.getInteger(at: start, as: UInt8.self) == Self.formatMarker,
              stored.getInteger(at: start + 1, as: UInt8.self) == Self.formatVersion,
              let expiresAt = stored.getInteger(at: start + 2, as: Int64.self) else {
            throw RedisError(.decodingFailed, "the Redis value of \(key) was not written by a RedisCacheTier of this format")
        }
        var ttl: Duration?
        if expiresAt != 0 {
            // Saturating: the header comes from Redis, where any client (or a damaged value) can
            // put any eight bytes; a far-past expiry is expired, not an overflow that traps.
            let remaining = expiresAt.subtractingClamped(nowMilliseconds)
            guard remaining > 0 else { return nil }
            ttl = .milliseconds(remaining)
        }
        let bytes = stored.withUnsafeReadableBytes { all in
            Data(bytes: all.baseAddress! + Self.headerSize, count: all.count - Self.headerSize)
        }
        return StoredValue(bytes: bytes, ttl: ttl)
    }
}
#endif  // Redis
