// The one timing helper of every Stash bench: StashBenchKit (this package) and the benches on
// SwiftNIO in Benchmarks/NIO, which the root package builds (Benchmarks/README.md says why).
// The root package compiles this folder as its own `BenchSupport` target, so it keeps to what
// the root's oldest platforms have (no Synchronization).
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Nanoseconds of `CLOCK_MONOTONIC` from an arbitrary origin: for timing regions.
@inline(__always)
public func monotonicNanoseconds() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
}

/// CPU time used by every thread of this process, in nanoseconds
/// (`CLOCK_PROCESS_CPUTIME_ID`): unlike wall time, it does not grow while the
/// process waits for a core that other work on the machine holds.
public func processCPUNanoseconds() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &spec)
    return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
}

/// The median of a non-empty sample (mean of the two middle values when even).
public func median(_ values: [Double]) -> Double {
    precondition(!values.isEmpty, "median of nothing")
    let sorted = values.sorted()
    let middle = sorted.count / 2
    if sorted.count % 2 == 1 { return sorted[middle] }
    return (sorted[middle - 1] + sorted[middle]) / 2
}
