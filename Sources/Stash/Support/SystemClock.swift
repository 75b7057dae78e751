#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The system's monotonic clock (`CLOCK_MONOTONIC`; `CLOCK_MONOTONIC_RAW` on Apple platforms), unaffected by changes to
/// the wall clock. The default for every cache.
///
/// Thread-safe; reading it does not block.
public struct SystemClock: CacheClock {
    /// Creates the system clock.
    public init() {}

    /// The current value of the monotonic clock, in nanoseconds.
    ///
    /// - Complexity: O(1); a vDSO call on Linux, no system call (its cost:
    ///   docs/benchmarks.md, "Primitives").
    @inlinable
    public var nanosecondsNow: Int64 {
        #if canImport(Darwin)
        // Darwin's CLOCK_MONOTONIC is the wall clock less the boot time, to the microsecond;
        // CLOCK_MONOTONIC_RAW is the nanosecond tick counter that ContinuousClock reads there.
        return Int64(clamping: clock_gettime_nsec_np(CLOCK_MONOTONIC_RAW))
        #else
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) &* 1_000_000_000 &+ Int64(spec.tv_nsec)
        #endif
    }
}

extension CacheClock where Self == SystemClock {
    /// The system's monotonic clock.
    public static var system: SystemClock { SystemClock() }
}
