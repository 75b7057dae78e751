#if Redis
/// A Lua script run with `EVALSHA`, falling back to `EVAL` when the server does not know it yet.
///
/// The SHA-1 digest is computed once, at initialisation, so the usual call is a
/// single `EVALSHA` round trip; a `NOSCRIPT` reply (a restarted server, a new
/// cluster node) costs one `EVAL`, which also loads the script.
///
/// Thread-safety: a value type, `Sendable`.
package struct RedisScript: Sendable, Hashable {
    /// The script's Lua source.
    package let source: String
    /// The script's SHA-1 digest in lowercase hexadecimal, as `EVALSHA` takes it.
    package let sha1: String

    /// Creates a script and computes its digest.
    ///
    /// - Parameter source: The Lua source.
    /// - Complexity: O(n) in the source's length.
    package init(_ source: String) {
        self.source = source
        self.sha1 = Self.hexDigest(Array(source.utf8))
    }

    /// SHA-1 (FIPS 180-4) of `message`, in lowercase hex. Used only to name scripts, not for security.
    static func hexDigest(_ message: [UInt8]) -> String {
        var h: [UInt32] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0]
        var padded = message
        padded.append(0x80)
        while padded.count % 64 != 56 { padded.append(0) }
        let bitLength = UInt64(message.count) &* 8
        for shift in stride(from: 56, through: 0, by: -8) { padded.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        var w = [UInt32](repeating: 0, count: 80)
        for chunk in stride(from: 0, to: padded.count, by: 64) {
            for i in 0..<16 {
                let b = chunk + i * 4
                w[i] = UInt32(padded[b]) << 24 | UInt32(padded[b + 1]) << 16 | UInt32(padded[b + 2]) << 8 | UInt32(padded[b + 3])
            }
            for i in 16..<80 {
                let x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]
                w[i] = x << 1 | x >> 31
            }
            var (a, b, c, d, e) = (h[0], h[1], h[2], h[3], h[4])
            for i in 0..<80 {
                let (f, k): (UInt32, UInt32)
                switch i {
                case 0..<20: (f, k) = ((b & c) | (~b & d), 0x5A82_7999)
                case 20..<40: (f, k) = (b ^ c ^ d, 0x6ED9_EBA1)
                case 40..<60: (f, k) = ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                default: (f, k) = (b ^ c ^ d, 0xCA62_C1D6)
                }
                let temp = (a << 5 | a >> 27) &+ f &+ e &+ k &+ w[i]
                (e, d, c, b, a) = (d, c, b << 30 | b >> 2, a, temp)
            }
            h[0] &+= a; h[1] &+= b; h[2] &+= c; h[3] &+= d; h[4] &+= e
        }
        return h.map { word in
            let hex = String(word, radix: 16)
            return String(repeating: "0", count: 8 - hex.count) + hex
        }.joined()
    }
}
#endif  // Redis
