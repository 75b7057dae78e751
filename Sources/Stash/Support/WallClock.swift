#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The wall clock (`CLOCK_REALTIME`): nanoseconds since the Unix epoch.
///
/// The default clock of the disk tier, whose times outlive the process and so
/// must share an origin across restarts. Unlike ``SystemClock`` it can jump when
/// the system time is set; the disk tier treats a time in the future as "now".
///
/// Thread-safe; reading it does not block.
public struct WallClock: CacheClock {
    /// Creates the wall clock.
    public init() {}

    /// The current value of `CLOCK_REALTIME`, in nanoseconds since 1970-01-01 UTC.
    ///
    /// - Complexity: O(1).
    @inlinable
    public var nanosecondsNow: Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) &* 1_000_000_000 &+ Int64(spec.tv_nsec)
    }
}

extension CacheClock where Self == WallClock {
    /// The wall clock, in nanoseconds since the Unix epoch.
    public static var wall: WallClock { WallClock() }
}
