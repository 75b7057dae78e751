#if Hummingbird
import Foundation

/// A value of ``StashPersistDriver`` as its cache stores it: a version byte, the expiry as
/// nanoseconds since the Unix epoch (big-endian, 0 for none), then the value's JSON.
///
/// The expiry travels with the value, so that `getWithTTL` can say how long is left and a `set`
/// without an expiry can keep the one already there, whichever tier (memory, disk, Redis) holds it.
struct PersistRecord: Sendable {
    static let version: UInt8 = 1
    static let headerSize = 9

    /// When the value expires, in nanoseconds since the Unix epoch; `nil` for never.
    let expiresAt: Int64?
    /// The value's JSON.
    let json: Data

    /// The record's bytes.
    var encoded: Data {
        var bytes = Data(capacity: Self.headerSize + json.count)
        bytes.append(Self.version)
        let expiry = UInt64(bitPattern: expiresAt ?? 0).bigEndian
        withUnsafeBytes(of: expiry) { bytes.append(contentsOf: $0) }
        bytes.append(json)
        return bytes
    }

    init(expiresAt: Int64?, json: Data) {
        self.expiresAt = expiresAt
        self.json = json
    }

    /// The record in `bytes`, or `nil` when they are not a record of this version (another
    /// writer's value under the same key, or damaged bytes).
    init?(decoding bytes: Data) {
        guard bytes.count >= Self.headerSize, bytes[bytes.startIndex] == Self.version else { return nil }
        var expiry: UInt64 = 0
        for byte in bytes[(bytes.startIndex + 1)..<(bytes.startIndex + Self.headerSize)] {
            expiry = expiry << 8 | UInt64(byte)
        }
        let nanoseconds = Int64(bitPattern: expiry)
        expiresAt = nanoseconds == 0 ? nil : nanoseconds
        json = Data(bytes[(bytes.startIndex + Self.headerSize)...])
    }
}
#endif  // Hummingbird
