#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The system's monotonic clock (`CLOCK_MONOTONIC`), unaffected by changes to
/// the wall clock. The default for every cache.
///
/// Thread-safe; reading it does not block.
public struct SystemClock: CacheClock {
    /// Creates the system clock.
    public init() {}

    /// The current value of `CLOCK_MONOTONIC`, in nanoseconds.
    ///
    /// - Complexity: O(1); a vDSO call on Linux, no system call (its cost:
    ///   docs/benchmarks.md, "Primitives").
    @inlinable
    public var nanosecondsNow: Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) &* 1_000_000_000 &+ Int64(spec.tv_nsec)
    }
}

extension CacheClock where Self == SystemClock {
    /// The system's monotonic clock.
    public static var system: SystemClock { SystemClock() }
}
