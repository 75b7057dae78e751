#if Hummingbird
import Foundation
import Stash

extension StashPersistDriver {
    /// A value as the driver's cache holds it: the value's JSON and its expiry, and, in memory, the
    /// Swift value it was made from.
    ///
    /// On disk and in Redis it is stored by ``codec``: a version byte, the expiry as nanoseconds
    /// since the Unix epoch (big-endian, 0 for none), then the JSON. The expiry travels with the
    /// value, so that `getWithTTL` can say how long is left and a `set` without an expiry can keep
    /// the one already there, whichever tier holds it.
    ///
    /// A value type; thread-safe.
    public struct Record: Sendable {
        static let version: UInt8 = 1
        static let headerSize = 9

        /// When the value expires, in nanoseconds since the Unix epoch; `nil` for never.
        let expiresAt: Int64?
        /// The value's JSON.
        let json: Data
        /// The Swift value the record was made from, so that a `get` of the same type in this
        /// process needs no decoding; `nil` once the record has been through disk or Redis.
        let object: (any Codable & Sendable)?

        init(expiresAt: Int64?, json: Data, object: (any Codable & Sendable)?) {
            self.expiresAt = expiresAt
            self.json = json
            self.object = object
        }

        /// The record's bytes.
        var encoded: Data {
            var bytes = Data(capacity: Self.headerSize + json.count)
            bytes.append(Self.version)
            let expiry = UInt64(bitPattern: expiresAt ?? 0).bigEndian
            withUnsafeBytes(of: expiry) { bytes.append(contentsOf: $0) }
            bytes.append(json)
            return bytes
        }

        /// The record in `bytes`, or `nil` when they are not a record of this version.
        init?(decoding bytes: Data) {
            guard bytes.count >= Self.headerSize, bytes[bytes.startIndex] == Self.version else { return nil }
            var expiry: UInt64 = 0
            for byte in bytes[(bytes.startIndex + 1)..<(bytes.startIndex + Self.headerSize)] {
                expiry = expiry << 8 | UInt64(byte)
            }
            let nanoseconds = Int64(bitPattern: expiry)
            expiresAt = nanoseconds == 0 ? nil : nanoseconds
            json = Data(bytes[(bytes.startIndex + Self.headerSize)...])
            object = nil
        }
    }

    /// The codec of the driver's records, for the disk and Redis tiers of a cache given to
    /// ``init(cache:clock:)``.
    ///
    /// Decoding throws `StashError` with code `decodingFailed` for bytes that are not a record
    /// (the cache then drops them as damaged).
    public static var codec: DiskCodec<Record> {
        DiskCodec(
            encode: { $0.encoded },
            decode: { bytes in
                guard let record = Record(decoding: bytes) else {
                    throw StashError(.decodingFailed, "the bytes are not a StashPersistDriver record")
                }
                return record
            })
    }
}
#endif  // Hummingbird
