/// SplitMix64 (Steele, Lea and Flood, 2014): a small, fast, seedable generator, so that a
/// randomized test or stress run replays exactly from its seed.
///
/// ```swift
/// var generator = SeededGenerator(seed: 42)
/// let key = Int.random(in: 0..<100, using: &generator)
/// ```
///
/// Not for anything that needs unpredictable numbers: the whole stream follows from the seed.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Creates a generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// The next 64 bits of the stream.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
