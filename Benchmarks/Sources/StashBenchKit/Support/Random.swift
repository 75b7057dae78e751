/// A seeded generator (xoshiro256**, seeded through SplitMix64), so that every
/// workload is the same sequence on every run and every machine.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var s0: UInt64, s1: UInt64, s2: UInt64, s3: UInt64

    public init(seed: UInt64) {
        var x = seed
        func splitMix() -> UInt64 {
            x &+= 0x9E37_79B9_7F4A_7C15
            var z = x
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        s0 = splitMix(); s1 = splitMix(); s2 = splitMix(); s3 = splitMix()
    }

    public mutating func next() -> UInt64 {
        let result = ((s1 &* 5) << 7 | (s1 &* 5) >> 57) &* 9
        let t = s1 << 17
        s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3
        s2 ^= t
        s3 = s3 << 45 | s3 >> 19
        return result
    }

    /// A uniform double in [0, 1).
    public mutating func nextUnit() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }
}

/// Draws ranks 0..<n with probability proportional to 1 / (rank + 1)^s, by
/// binary search over the cumulative distribution. Rank 0 is the most popular.
public struct ZipfDistribution: Sendable {
    public let count: Int
    public let exponent: Double
    private let cumulative: [Double]

    public init(count: Int, exponent: Double) {
        precondition(count > 0)
        self.count = count
        self.exponent = exponent
        var sums = [Double](repeating: 0, count: count)
        var total = 0.0
        for rank in 0..<count {
            total += 1.0 / pow(Double(rank + 1), exponent)
            sums[rank] = total
        }
        for rank in 0..<count { sums[rank] /= total }
        sums[count - 1] = 1.0
        cumulative = sums
    }

    public func sample(using generator: inout SeededGenerator) -> Int {
        let u = generator.nextUnit()
        var low = 0, high = count - 1
        while low < high {
            let mid = (low + high) / 2
            if cumulative[mid] > u { high = mid } else { low = mid + 1 }
        }
        return low
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
