import Foundation

/// How a ``DiskCache`` turns values into bytes and back.
///
/// Chosen at initialisation. Built in: ``data`` (no copy), ``string`` (UTF-8)
/// and ``json`` for `Codable` values; or pass your own closures, like YYCache's
/// `customArchiveBlock` and `customUnarchiveBlock`:
///
/// ```swift
/// let codec = DiskCodec<Image>(
///     encode: { try $0.pngData() },
///     decode: { try Image(pngData: $0) })
/// ```
///
/// A value that fails to decode counts as a miss: the disk cache removes it and
/// reports it to its logger. A value that fails to encode makes the write throw
/// ``StashError/Code/encodingFailed``.
///
/// Both closures must be thread-safe: they run on whichever thread calls the cache.
public struct DiskCodec<Value>: Sendable {
    /// Turns a value into bytes. May throw.
    public let encode: @Sendable (Value) throws -> Data
    /// Turns bytes back into a value. May throw.
    public let decode: @Sendable (Data) throws -> Value

    /// Creates a codec from two closures.
    ///
    /// - Parameters:
    ///   - encode: Turns a value into bytes.
    ///   - decode: Turns bytes back into a value.
    public init(
        encode: @escaping @Sendable (Value) throws -> Data,
        decode: @escaping @Sendable (Data) throws -> Value
    ) {
        self.encode = encode
        self.decode = decode
    }
}

extension DiskCodec where Value == Data {
    /// Stores `Data` as it is. `Data` is copy-on-write, so nothing is copied
    /// on the way in or out of the codec.
    public static var data: DiskCodec<Data> {
        DiskCodec(encode: { $0 }, decode: { $0 })
    }
}

extension DiskCodec where Value == String {
    /// Stores a `String` as UTF-8. Decoding bytes that are not valid UTF-8 fails,
    /// so the entry counts as a miss.
    public static var string: DiskCodec<String> {
        DiskCodec(
            encode: { Data($0.utf8) },
            decode: { data in
                guard let string = String(data: data, encoding: .utf8) else {
                    throw StashError(.decodingFailed, "the stored bytes are not valid UTF-8")
                }
                return string
            })
    }
}

extension DiskCodec where Value: Codable {
    /// Stores a `Codable` value as JSON, with Foundation's default encoder and decoder.
    public static var json: DiskCodec<Value> {
        json(encoder: JSONEncoder(), decoder: JSONDecoder())
    }

    /// Stores a `Codable` value as JSON, with the given encoder and decoder
    /// (for date strategies, key strategies and so on).
    ///
    /// The codec keeps its own copies: each coder's settings (output
    /// formatting, date, data, key and non-conforming float strategies, and
    /// `userInfo`) are copied into a new instance, so later changes to the
    /// instances passed in have no effect on the codec, and the codec never
    /// shares a coder with its caller.
    ///
    /// - Complexity: O(1) per call; encoding and decoding are O(size).
    public static func json(encoder: JSONEncoder, decoder: JSONDecoder) -> DiskCodec<Value> {
        let box = CoderBox<Value>(encoder: encoder.copy(), decoder: decoder.copy())
        return DiskCodec(encode: box.encode, decode: box.decode)
    }
}

/// Gives one private `JSONEncoder` and `JSONDecoder` pair to concurrent callers.
private final class CoderBox<Value: Codable>: @unchecked Sendable {
    // @unchecked Sendable: the box holds copies made for it alone (see
    // `DiskCodec.json(encoder:decoder:)`); nothing changes their settings
    // after init, and Foundation's coders keep no state between `encode` and
    // `decode` calls, so concurrent calls on them are safe.
    private let encoder: JSONEncoder
    private let decoder: JSONDecoder

    init(encoder: JSONEncoder, decoder: JSONDecoder) {
        self.encoder = encoder
        self.decoder = decoder
    }

    @Sendable func encode(_ value: Value) throws -> Data {
        try encoder.encode(value)
    }

    @Sendable func decode(_ data: Data) throws -> Value {
        try decoder.decode(Value.self, from: data)
    }
}

extension JSONEncoder {
    /// A new encoder with this one's settings.
    fileprivate func copy() -> JSONEncoder {
        let copy = JSONEncoder()
        copy.outputFormatting = outputFormatting
        copy.dateEncodingStrategy = dateEncodingStrategy
        copy.dataEncodingStrategy = dataEncodingStrategy
        copy.nonConformingFloatEncodingStrategy = nonConformingFloatEncodingStrategy
        copy.keyEncodingStrategy = keyEncodingStrategy
        copy.userInfo = userInfo
        return copy
    }
}

extension JSONDecoder {
    /// A new decoder with this one's settings.
    fileprivate func copy() -> JSONDecoder {
        let copy = JSONDecoder()
        copy.dateDecodingStrategy = dateDecodingStrategy
        copy.dataDecodingStrategy = dataDecodingStrategy
        copy.nonConformingFloatDecodingStrategy = nonConformingFloatDecodingStrategy
        copy.keyDecodingStrategy = keyDecodingStrategy
        copy.userInfo = userInfo
        return copy
    }
}
