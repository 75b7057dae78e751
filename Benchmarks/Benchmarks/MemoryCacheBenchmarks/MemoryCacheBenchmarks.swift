// ordo-one/benchmark suite for Stash's MemoryCache: YYCache's workload (200,000
// distinct String keys: set, get-hit, get-miss), once per eviction policy.
//
// Each benchmark iteration is a slice of 1,000 operations of that workload
// (scalingFactor .kilo), so wall-clock and throughput read per operation and the
// percentiles (p50, p99, ...) are over many slices. Slices walk through the
// 200,000 keys in order; the set benchmark starts over with a fresh, empty cache
// once all 200,000 are in (made outside the measured region). Limits are set but
// never reached: countLimit 1,000,000, costLimit Int.max / 2.
//
// Run, from this folder (Benchmarks/):
//   swift package benchmark --target MemoryCacheBenchmarks
// Check against the static thresholds checked into Thresholds/:
//   swift package benchmark thresholds check --target MemoryCacheBenchmarks
// Re-record them (on the reference machine, after a deliberate change):
//   swift package --allow-writing-to-package-directory benchmark thresholds update --target MemoryCacheBenchmarks

import Benchmark
import Stash

private let keyCount = 200_000
private let sliceSize = 1_000  // BenchmarkScalingFactor.kilo
private let countLimit = 1_000_000
private let costLimit = Int.max / 2

/// Mutable state of one benchmark across its iterations. Iterations run one at
/// a time on one thread.
private final class State: @unchecked Sendable {
    // @unchecked Sendable: touched only by the benchmark's own serial iterations.
    let policy: EvictionPolicy
    let keys: [String]
    let absentKeys: [String]
    var cache: MemoryCache<String, Int>
    var nextSlice = 0

    init(policy: EvictionPolicy, populated: Bool) {
        self.policy = policy
        keys = (0..<keyCount).map { "key\($0)" }
        absentKeys = (keyCount..<(2 * keyCount)).map { "key\($0)" }
        cache = MemoryCache(countLimit: countLimit, costLimit: costLimit, policy: policy)
        if populated {
            for (index, key) in keys.enumerated() { cache.setValue(index, forKey: key) }
        }
    }

    /// The key indices of the next slice, wrapping around after the last.
    func takeSlice() -> Range<Int> {
        let start = nextSlice * sliceSize
        nextSlice = (nextSlice + 1) % (keyCount / sliceSize)
        return start..<(start + sliceSize)
    }
}

let benchmarks: @Sendable () -> Void = {
    // Tolerances for `thresholds check` (against Thresholds/*.p90.json) and for
    // `baseline check`. This machine is shared (2 cores, others compiling) and
    // has no hardware counters (no `instructions` metric), so time moves by up
    // to ~60% between runs of unchanged code: the time tolerances catch a
    // doubling, not 10%. Allocation counts do not move with load: they are
    // checked exactly (a get must never allocate; a set only when the cache grows,
    // which no p90 slice sees).
    let wallClockTolerance = BenchmarkThresholds(relative: [.p50: 60, .p90: 100])
    let throughputTolerance = BenchmarkThresholds(relative: [.p50: 40, .p90: 50])
    let mallocTolerance = BenchmarkThresholds(absolute: [.p50: 0, .p90: 0])

    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        timeUnits: .nanoseconds,
        warmupIterations: 20,
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 2_000,
        thresholds: [
            .wallClock: wallClockTolerance,
            .throughput: throughputTolerance,
            .mallocCountTotal: mallocTolerance,
        ])

    // Names carry no spaces: the tool writes Thresholds/<target>.<name>.p90.json with
    // spaces turned into '_' but reads it back under the name as it is.
    for (name, policy) in [("LRU", EvictionPolicy.lru), ("FIFO", .fifo), ("LFU", .lfu)] {
        Benchmark("set-\(name)") { benchmark, state in
            let slice = state.takeSlice()
            if slice.lowerBound == 0 {
                // Every key is in: start over with an empty cache, unmeasured.
                state.cache = MemoryCache(countLimit: countLimit, costLimit: costLimit, policy: state.policy)
            }
            let cache = state.cache
            let keys = state.keys
            benchmark.startMeasurement()
            for index in slice {
                cache.setValue(index, forKey: keys[index])
            }
            benchmark.stopMeasurement()
        } setup: {
            State(policy: policy, populated: false)
        }

        // Reads of present keys, then of absent ones: the same loop.
        for (phase, keyPath) in [("get-hit", \State.keys), ("get-miss", \State.absentKeys)] {
            Benchmark("\(phase)-\(name)") { benchmark, state in
                let slice = state.takeSlice()
                let cache = state.cache
                let keys = state[keyPath: keyPath]
                var sum = 0
                benchmark.startMeasurement()
                for index in slice {
                    sum &+= cache.value(forKey: keys[index]) ?? 0
                }
                benchmark.stopMeasurement()
                blackHole(sum)
            } setup: {
                State(policy: policy, populated: true)
            }
        }
    }
}
