/// How long a cache's loads took: a histogram with one bucket per power of
/// two of microseconds, from under 1 µs to over 35 minutes.
///
/// Percentiles are read from the buckets, so each is exact to within a factor
/// of two (the bucket's upper bound is returned): enough to tell a 2 ms
/// database from a 200 ms one, in 33 counters. A plain value; O(1) to record.
public struct LoadTimeDistribution: Hashable, Sendable {
    /// How many loads were recorded.
    public private(set) var count = 0
    /// The sum of every recorded load's time.
    public private(set) var total: Duration = .zero
    /// The longest recorded load, or zero before the first.
    public private(set) var longest: Duration = .zero
    /// `buckets[i]` counts loads that took under 2^i µs (and, for i > 0, at
    /// least 2^(i-1) µs); the last bucket also counts everything longer.
    public private(set) var buckets = [Int](repeating: 0, count: 33)

    /// Creates an empty distribution.
    public init() {}

    /// Records one load that took `duration`. O(1).
    public mutating func record(_ duration: Duration) {
        let micros = max(duration.nanosecondsClamped / 1_000, 0)
        let bucket = micros == 0 ? 0 : min(Int64.bitWidth - micros.leadingZeroBitCount, buckets.count - 1)
        buckets[bucket] += 1
        count += 1
        total += duration
        longest = max(longest, duration)
    }

    /// The mean load time, or zero before the first load.
    public var mean: Duration {
        count == 0 ? .zero : total / count
    }

    /// The time under which a fraction `p` (0...1) of loads finished, as the
    /// upper bound of the bucket that reaches it; `nil` before the first load.
    ///
    /// - Complexity: O(33).
    public func percentile(_ p: Double) -> Duration? {
        guard count > 0 else { return nil }
        let rank = max(Int((p * Double(count)).rounded(.up)), 1)
        var seen = 0
        for (index, n) in buckets.enumerated() {
            seen += n
            if seen >= rank {
                return index == buckets.count - 1 ? longest : min(.microseconds(Int64(1) << index), longest)
            }
        }
        return longest
    }
}
