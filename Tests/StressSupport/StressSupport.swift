import Foundation
import StashTestSupport

// Shared by the `stash-stress` helper process and the reliability tests, so both
// sides write and check one format. The seeded generator is StashTestSupport's.

/// A self-describing value: `"STV1"`, seq (UInt64 LE), key length (UInt32 LE),
/// key bytes, payload length (UInt32 LE), payload derived from seq, and the
/// FNV-1a 64 hash of all of the above (LE). A reader can tell a whole value of
/// the right key from torn or foreign bytes.
public enum StressValue {
    private static let magic: [UInt8] = Array("STV1".utf8)

    /// A value of about `length` bytes for `key` and sequence number `seq`.
    public static func make(key: String, seq: UInt64, length: Int) -> Data {
        let keyBytes = Array(key.utf8)
        let overhead = 4 + 8 + 4 + keyBytes.count + 4 + 8
        let payloadLength = max(0, length - overhead)
        var bytes = [UInt8]()
        bytes.reserveCapacity(overhead + payloadLength)
        bytes += magic
        append(seq, to: &bytes)
        append(UInt32(keyBytes.count), to: &bytes)
        bytes += keyBytes
        append(UInt32(payloadLength), to: &bytes)
        var rng = SeededGenerator(seed: seq &* 0x2545_F491_4F6C_DD1D)
        var remaining = payloadLength
        while remaining > 0 {
            var word = rng.next()
            for _ in 0..<min(8, remaining) {
                bytes.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
            remaining -= min(8, remaining)
        }
        append(checksum(bytes[...]), to: &bytes)
        return Data(bytes)
    }

    /// The key bytes and sequence number, or `nil` unless the bytes are one whole,
    /// undamaged value.
    private static func parse(_ data: Data) -> (key: [UInt8], seq: UInt64)? {
        let bytes = [UInt8](data)
        guard bytes.count >= 28, Array(bytes[0..<4]) == magic else { return nil }
        let seq = read64(bytes, 4)
        let keyLength = Int(read32(bytes, 12))
        guard bytes.count >= 16 + keyLength + 4 + 8 else { return nil }
        let key = Array(bytes[16..<(16 + keyLength)])
        let payloadLength = Int(read32(bytes, 16 + keyLength))
        let end = 16 + keyLength + 4 + payloadLength
        guard bytes.count == end + 8 else { return nil }
        guard checksum(bytes[0..<end]) == read64(bytes, end) else { return nil }
        return (key, seq)
    }

    /// The sequence number if `data` is a whole value of `key`, else `nil`.
    public static func seq(of data: Data, key: String) -> UInt64? {
        guard let parsed = parse(data), parsed.key == Array(key.utf8) else { return nil }
        return parsed.seq
    }

    /// FNV-1a, 64 bits.
    private static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        return hash
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }

    private static func read64(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
        (0..<8).reduce(0) { $0 | UInt64(bytes[offset + $1]) << (8 * UInt64($1)) }
    }

    private static func read32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * UInt32($1)) }
    }
}
