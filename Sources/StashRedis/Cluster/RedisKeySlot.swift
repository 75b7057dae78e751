#if Redis
/// The hash slot (0...16383) that Redis Cluster assigns a key.
///
/// `CRC16(key) mod 16384`, with CRC16-CCITT (XMODEM) as the Redis Cluster
/// specification defines it. When the key holds a hash tag (a `{...}` with at
/// least one byte between the first `{` and the next `}`), only the tag is
/// hashed, so `{user:1}:profile` and `{user:1}:lock` share a slot.
///
/// Thread-safety: a value type, `Sendable`.
package struct RedisKeySlot: Sendable, Hashable, Comparable {
    /// The number of hash slots in a Redis Cluster.
    package static let count = 16384

    /// The slot number, 0...16383.
    package let rawValue: Int

    /// The slot of `key`.
    ///
    /// - Parameter key: The key, as UTF-8 bytes.
    /// - Complexity: O(n) in the key's length.
    package init(key: String) {
        var utf8 = Array(key.utf8)
        if let open = utf8.firstIndex(of: UInt8(ascii: "{")),
           let close = utf8[(open + 1)...].firstIndex(of: UInt8(ascii: "}")),
           close > open + 1 {
            utf8 = Array(utf8[(open + 1)..<close])
        }
        rawValue = Int(Self.crc16(utf8) & 0x3FFF)
    }

    /// Orders slots by number.
    ///
    /// - Parameters:
    ///   - lhs: A slot.
    ///   - rhs: Another slot.
    /// - Returns: Whether `lhs` comes first.
    package static func < (lhs: RedisKeySlot, rhs: RedisKeySlot) -> Bool { lhs.rawValue < rhs.rawValue }

    /// CRC16-CCITT (XMODEM): polynomial 0x1021, initial value 0, no reflection.
    static func crc16(_ bytes: [UInt8]) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 {
                crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1
            }
        }
        return crc
    }
}
#endif  // Redis
