/// A fuzzed property that does not hold: the fuzz targets stop on it (so libFuzzer keeps the
/// input), and the corpus replay in `swift test` records it as an issue.
package struct PropertyViolation: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

/// Reads a fuzzer's input front to back: fixed-size fields first, then the rest as text.
/// Reading past the end gives zeros, so every input means something.
package struct FuzzReader {
    private let bytes: [UInt8]
    private var offset = 0

    package init(_ bytes: [UInt8]) { self.bytes = bytes }

    package mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    package mutating func int64() -> Int64 {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 64, by: 8) { value |= UInt64(byte()) << UInt64(shift) }
        return Int64(bitPattern: value)
    }

    package mutating func uint16() -> UInt16 { UInt16(byte()) | UInt16(byte()) << 8 }

    /// What is left, decoded as UTF-8 (invalid sequences replaced).
    package mutating func rest() -> String {
        defer { offset = bytes.count }
        return offset < bytes.count ? String(decoding: bytes[offset...], as: UTF8.self) : ""
    }
}
