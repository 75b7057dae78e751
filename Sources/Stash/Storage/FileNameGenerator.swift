/// Names for value files in `data/`: 32 hex digits (128 bits) from a SplitMix64
/// stream whose starting point is drawn from the system's random source.
///
/// Names need only be unique, never secret (the directory is private to its
/// owner, mode 0700), so one system call seeds an instance and each name then costs
/// a few multiplications instead of a call per byte. Instances and processes start
/// at independent random points of the 2^64-long stream; should two names ever
/// collide anyway, `O_EXCL` refuses the second and the writer draws another.
///
/// A value type, NOT thread-safe: each ``KVStorage`` owns one and uses it under
/// its owner's lock.
struct FileNameGenerator {
    /// SplitMix64's counter.
    private var state: UInt64

    /// Creates a generator seeded from `SystemRandomNumberGenerator`.
    init() {
        var system = SystemRandomNumberGenerator()
        state = system.next()
    }

    /// The next 64 bits of the stream (SplitMix64, Steele, Lea and Flood 2014).
    private mutating func nextWord() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A one-off random name of `hexDigits` (at most 32) lowercase hex digits, for
    /// names made rarely (trash entries, a manifest set aside): one system call.
    static func randomName(hexDigits: Int) -> String {
        var generator = FileNameGenerator()
        return String(generator.next().prefix(hexDigits))
    }

    /// A fresh name: 32 lowercase hex digits.
    ///
    /// - Complexity: O(1); no system call.
    mutating func next() -> String {
        let high = nextWord()
        let low = nextWord()
        return String(unsafeUninitializedCapacity: 32) { buffer in
            let digits: StaticString = "0123456789abcdef"
            digits.withUTF8Buffer { hex in
                for index in 0..<16 {
                    buffer[index] = hex[Int((high >> UInt64(60 - 4 * index)) & 0xF)]
                    buffer[16 + index] = hex[Int((low >> UInt64(60 - 4 * index)) & 0xF)]
                }
            }
            return 32
        }
    }
}
