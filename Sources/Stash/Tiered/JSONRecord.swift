import Foundation

/// A `Codable` value as a framework's key-value store keeps it in a Stash ``Cache``: the value's
/// JSON and its expiry, and, in memory, the Swift value it was made from.
///
/// The record of StashHummingbird's `StashPersistDriver` and StashVapor's `StashVaporCache`: give
/// the disk and Redis tiers of their cache ``DiskCodec/jsonRecord``. One format serves both, so one
/// Redis keyspace can back a Hummingbird and a Vapor server.
///
/// On disk and in Redis a record is a version byte (1), the expiry as nanoseconds since the Unix
/// epoch (big-endian, 0 for none), then the JSON. The expiry travels with the value, so that
/// whichever tier holds it can say how long is left. In memory the record also keeps the value
/// itself, so that a read of the type that was written needs no decoding; a record read from disk
/// or Redis is decoded from its JSON.
///
/// A value type; thread-safe.
public struct JSONRecord: Sendable {
    static let version: UInt8 = 1
    /// The bytes before the JSON: the version and the expiry.
    static let headerSize = 9

    /// When the value expires, in nanoseconds since the Unix epoch; `nil` for never.
    package let expiresAt: Int64?
    /// The value's JSON.
    let json: Data
    /// The Swift value the record was made from; `nil` once the record has been through disk or
    /// Redis.
    let object: (any Sendable)?

    /// The record of `value`, expiring at `expiresAt` (nanoseconds since the Unix epoch; `nil`
    /// for never).
    ///
    /// - Throws: `StashError` with code `encodingFailed` when `value` does not encode as JSON.
    /// - Complexity: The value's JSON encoding.
    package init<Value: Encodable & Sendable>(_ value: Value, expiresAt: Int64?) throws(StashError) {
        do {
            json = try JSONEncoder().encode(value)
        } catch {
            throw StashError(.encodingFailed, "the value could not be encoded as JSON", cause: error)
        }
        self.expiresAt = expiresAt
        object = value
    }

    /// The record's value as a `Value`: the value itself when the record was made from one in
    /// this process, otherwise decoded from its JSON; `nil` when it is not a `Value`.
    ///
    /// - Complexity: O(1), or the JSON's decoding.
    package func value<Value: Decodable>(as type: Value.Type) -> Value? {
        if let object = object as? Value { return object }
        return try? JSONDecoder().decode(Value.self, from: json)
    }

    /// Whether the record has not expired at `now` (nanoseconds since the Unix epoch).
    package func isLive(at now: Int64) -> Bool {
        expiresAt.map { $0 > now } ?? true
    }

    /// The time left before the record expires at `now`; `nil` for no expiry.
    package func timeToLive(at now: Int64) -> Duration? {
        expiresAt.map { Duration.nanoseconds($0 - now) }
    }

    /// The wall-clock time `duration` after `now`, in nanoseconds since the Unix epoch; `nil` for
    /// no expiry. Saturates at `Int64.max`.
    package static func expiry(after duration: Duration?, now: Int64) -> Int64? {
        duration.map { now.addingClamped($0.nanosecondsClamped) }
    }

    /// The record's size as its encoded bytes: the cost a memory tier should count.
    package var byteCount: Int { Self.headerSize + json.count }

    /// The record's bytes.
    var encoded: Data {
        var bytes = Data(capacity: byteCount)
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

extension DiskCodec where Value == JSONRecord {
    /// Stores a ``JSONRecord`` in its format: a version byte, the expiry, the JSON.
    ///
    /// Decoding throws `StashError` with code `decodingFailed` for bytes that are not a record of
    /// this version (a cache then drops them as damaged). O(n) in the record's size.
    public static var jsonRecord: DiskCodec<JSONRecord> {
        DiskCodec(
            encode: { $0.encoded },
            decode: { bytes in
                guard let record = JSONRecord(decoding: bytes) else {
                    throw StashError(.decodingFailed, "the bytes are not a JSONRecord")
                }
                return record
            })
    }
}
