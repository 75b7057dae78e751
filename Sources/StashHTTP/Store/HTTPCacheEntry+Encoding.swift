#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import Stash

/// The disk tier's encoding of an entry: a compact binary layout, no JSON.
///
/// ```
/// "SHC1"  u32 variant count
/// per variant: u16 status, str reason, i64 requestTime, i64 responseTime,
///              u32 vary count × (str name, u8 present, str value),
///              u32 field count × (str name, str value),
///              u32 body length, body bytes
/// str = u32 length + UTF-8 bytes; integers little-endian.
/// ```
/// The article "Stored entry format" describes it byte by byte. Decoding checks every length
/// against the bytes left, in 64 bits, so damaged data is a miss, never a crash, also where `Int`
/// has 32 bits; encoding refuses an entry with a length past `UInt32.max` instead of trapping.
extension HTTPCacheEntry {
    static let magic: [UInt8] = Array("SHC1".utf8)
    /// The most variants one record holds: the decoder refuses more, and
    /// `HTTPCache.Configuration.maximumVariantsPerURL` is clamped to it.
    static let maximumVariants = 1024

    /// The encoding, or `nil` when a length does not fit its 32-bit field (a body or a header
    /// field of 4 GiB or more): such an entry is kept in memory only.
    func encoded() -> [UInt8]? {
        guard variants.count <= Self.maximumVariants,
              variants.allSatisfy({ UInt32(exactly: $0.body.count) != nil }) else { return nil }
        var out = Self.magic
        out.reserveCapacity(cost + 64)
        out.appendInteger(UInt32(variants.count))
        for variant in variants {
            out.appendInteger(UInt16(clamping: variant.status.code))
            guard out.appendString(variant.status.reasonPhrase) else { return nil }
            out.appendInteger(variant.requestTime)
            out.appendInteger(variant.responseTime)
            guard out.appendLength(variant.varyValues.count) else { return nil }
            for vary in variant.varyValues {
                guard out.appendString(vary.name) else { return nil }
                out.append(vary.value == nil ? 0 : 1)
                guard out.appendString(vary.value ?? "") else { return nil }
            }
            guard out.appendLength(variant.fields.count) else { return nil }
            for field in variant.fields {
                guard out.appendString(field.name.rawName), out.appendString(field.value) else { return nil }
            }
            guard out.appendLength(variant.body.count) else { return nil }
            out.append(contentsOf: variant.body)
        }
        return out
    }

    /// The entry in `bytes`, or `nil` when they are not a valid encoding.
    static func decode(_ bytes: some Collection<UInt8>) -> HTTPCacheEntry? {
        var reader = ByteReader(Array(bytes))
        guard reader.take(4) == magic[...], let count: UInt32 = reader.integer(), count <= Self.maximumVariants else { return nil }
        var variants: [StoredResponse] = []
        for _ in 0..<count {
            guard let code: UInt16 = reader.integer(), (100...999).contains(code), let reason = reader.string(),
                  let requestTime: Int64 = reader.integer(), let responseTime: Int64 = reader.integer(),
                  let varyCount: UInt32 = reader.integer()
            else { return nil }
            var varyValues: [StoredResponse.VaryValue] = []
            for _ in 0..<varyCount {
                guard let name = reader.string(), let present = reader.take(1)?.first, let value = reader.string() else { return nil }
                varyValues.append(.init(name: name, value: present == 1 ? value : nil))
            }
            guard let fieldCount: UInt32 = reader.integer() else { return nil }
            var fields = HTTPFields()
            for _ in 0..<fieldCount {
                guard let name = reader.string(), let value = reader.string(), let fieldName = HTTPField.Name(name) else { return nil }
                fields.append(HTTPField(name: fieldName, value: value))
            }
            guard let bodyLength: UInt32 = reader.integer(), let body = reader.take(length: bodyLength) else { return nil }
            variants.append(StoredResponse(
                status: HTTPResponse.Status(code: Int(code), reasonPhrase: reason), fields: fields,
                requestTime: requestTime, responseTime: responseTime, varyValues: varyValues, body: Array(body)))
        }
        guard reader.isAtEnd, !variants.isEmpty else { return nil }
        return HTTPCacheEntry(variants: variants)
    }
}

extension DiskCodec where Value == HTTPCacheEntry {
    /// The codec of ``HTTPCacheEntry``: the `SHC1` record of <doc:StoredEntryFormat>, the same
    /// bytes the disk tier holds. Give it to a remote tier shared by several HTTP caches
    /// (``HTTPCache/Configuration/remote``).
    ///
    /// Encoding throws `StashError.Code.encodingFailed` for an entry with a length of 4 GiB or
    /// more; decoding throws `StashError.Code.decodingFailed` for bytes that are not a whole
    /// record, so a damaged value is a miss (the tier removes or skips it), never a crash.
    ///
    /// - Complexity: O(n) in the entry's size, both ways. Thread-safe.
    public static var httpCacheEntry: DiskCodec<HTTPCacheEntry> {
        DiskCodec(
            encode: { entry in
                guard let bytes = entry.encoded() else {
                    throw StashError(.encodingFailed, "an HTTP cache entry has a length of 4 GiB or more")
                }
                return Data(bytes)
            },
            decode: { data in
                guard let entry = HTTPCacheEntry.decode(data) else {
                    throw StashError(.decodingFailed, "the bytes are not a stored HTTP cache entry (SHC1 record)")
                }
                return entry
            })
    }
}

extension [UInt8] {
    mutating func appendInteger<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }

    /// Appends `count` as a `u32`; `false` (appending nothing) when it does not fit.
    mutating func appendLength(_ count: Int) -> Bool {
        guard let length = UInt32(exactly: count) else { return false }
        appendInteger(length)
        return true
    }

    /// Appends a `str`; `false` when its length does not fit a `u32`.
    mutating func appendString(_ string: String) -> Bool {
        guard appendLength(string.utf8.count) else { return false }
        append(contentsOf: string.utf8)
        return true
    }
}

/// Reads the encoding, checking each length against what is left.
struct ByteReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { offset == bytes.count }

    mutating func take(_ count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, count <= bytes.count - offset else { return nil }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    /// `take` for a length read from the bytes: compared with what is left before it becomes an
    /// `Int`, which has 32 bits on some platforms (watchOS arm64_32).
    mutating func take(length: UInt32) -> ArraySlice<UInt8>? {
        guard UInt64(length) <= UInt64(bytes.count - offset) else { return nil }
        return take(Int(length))
    }

    mutating func integer<T: FixedWidthInteger>() -> T? {
        guard let slice = take(MemoryLayout<T>.size) else { return nil }
        var value = T.zero
        for (index, byte) in slice.enumerated() { value |= T(truncatingIfNeeded: byte) << (8 * index) }
        return value
    }

    mutating func string() -> String? {
        guard let length: UInt32 = integer(), let slice = take(length: length) else { return nil }
        // Not String(validating:as:), which needs macOS 15 and iOS 18: decoding replaces invalid
        // UTF-8 with U+FFFD, so the bytes survive unchanged exactly when they were valid.
        let string = String(decoding: slice, as: UTF8.self)
        return string.utf8.elementsEqual(slice) ? string : nil
    }
}
