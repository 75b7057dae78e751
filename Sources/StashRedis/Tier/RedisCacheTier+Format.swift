import Foundation
import NIOCore
import Stash

extension RedisCacheTier {
    /// The first byte of every stored value: tells the tier's values from foreign ones.
    static var formatMarker: UInt8 { 0xC5 }
    /// The layout of the header below; bumped when it changes.
    static var formatVersion: UInt8 { 1 }
    /// Marker, version, and the absolute expiry in Unix milliseconds (big-endian `Int64`, 0 for none).
    static var headerSize: Int { 10 }

    /// The header and the codec's bytes for `value`.
    func encode(_ value: Value, key: String, timeToLive: Duration?) throws(RedisError) -> ByteBuffer {
        if let timeToLive, timeToLive <= .zero {
            throw RedisError(.invalidArgument, "the time to live for \(key) is not positive: \(timeToLive)")
        }
        let data: Data
        do {
            data = try codec.encode(value)
        } catch {
            throw RedisError(.encodingFailed, "the codec could not encode the value for \(key)", cause: error)
        }
        guard data.count + Self.headerSize <= configuration.maximumValueSize else {
            throw RedisError(.valueTooLarge, "the value for \(key) takes \(data.count) bytes, over the limit of \(configuration.maximumValueSize)")
        }
        var buffer = ByteBuffer()
        buffer.reserveCapacity(data.count + Self.headerSize)
        buffer.writeInteger(Self.formatMarker)
        buffer.writeInteger(Self.formatVersion)
        var expiresAt: Int64 = 0
        if let timeToLive {
            expiresAt = wallClock.nanosecondsNow / 1_000_000 + RedisClient.milliseconds(timeToLive)
        }
        buffer.writeInteger(expiresAt)
        buffer.writeBytes(data)
        return buffer
    }

    /// The value and remaining time to live in `stored`; `nil` when its expiry has passed.
    func decode(_ stored: ByteBuffer, key: String) throws(RedisError) -> RemoteCacheEntry<Value>? {
        var stored = stored
        guard stored.readableBytes >= Self.headerSize,
              stored.readInteger(as: UInt8.self) == Self.formatMarker,
              stored.readInteger(as: UInt8.self) == Self.formatVersion,
              let expiresAt = stored.readInteger(as: Int64.self) else {
            throw RedisError(.decodingFailed, "the Redis value of \(key) was not written by a RedisCacheTier of this format")
        }
        var timeToLive: Duration?
        if expiresAt != 0 {
            let remaining = expiresAt - wallClock.nanosecondsNow / 1_000_000
            guard remaining > 0 else { return nil }
            timeToLive = .milliseconds(remaining)
        }
        let value: Value
        do {
            value = try codec.decode(Data(stored.readableBytesView))
        } catch {
            throw RedisError(.decodingFailed, "the codec could not decode the value of \(key)", cause: error)
        }
        return RemoteCacheEntry(value: value, timeToLive: timeToLive)
    }
}
