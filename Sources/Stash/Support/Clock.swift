#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A monotonic source of time for expiry decisions.
///
/// Caches read time only through a clock, so tests can inject a ``ManualClock``
/// and advance it instead of sleeping. Time is an opaque count of nanoseconds
/// from an arbitrary fixed origin: only differences are meaningful.
///
/// Conformers must be thread-safe and must never go backwards.
public protocol CacheClock: Sendable {
    /// The current time, in nanoseconds from the clock's origin. Never decreases.
    var nanosecondsNow: Int64 { get }
}

/// The system's monotonic clock (`CLOCK_MONOTONIC`), unaffected by changes to
/// the wall clock. The default for every cache.
///
/// Thread-safe; reading it does not block.
public struct SystemClock: CacheClock {
    /// Creates the system clock.
    public init() {}

    /// The current value of `CLOCK_MONOTONIC`, in nanoseconds.
    ///
    /// - Complexity: O(1); a vDSO call costing about 20 ns on Linux.
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

/// A clock that moves only when told to: for tests.
///
/// ```swift
/// let clock = ManualClock()
/// let cache = MemoryCache<String, Int>(clock: clock)
/// cache.setValue(1, forKey: "a", ttl: .seconds(10))
/// clock.advance(by: .seconds(11))
/// cache.value(forKey: "a")   // nil: expired
/// ```
///
/// Thread-safe: reads and advances are serialised by a lock.
public final class ManualClock: CacheClock, Sendable {
    private let now: LockedValue<Int64>

    /// Creates a clock that reads `start` nanoseconds. Defaults to 0.
    public init(start: Int64 = 0) {
        now = LockedValue(start)
    }

    /// The time the clock was last set to.
    public var nanosecondsNow: Int64 {
        now.withLock { $0 }
    }

    /// Moves the clock forward.
    ///
    /// - Parameter duration: How far to move. Must not be negative.
    public func advance(by duration: Duration) {
        let step = duration.nanosecondsClamped
        precondition(step >= 0, "ManualClock cannot go backwards")
        now.withLock { $0 = $0.addingClamped(step) }
    }
}

extension Duration {
    /// The duration in whole nanoseconds, clamped to `Int64`'s range.
    @usableFromInline
    var nanosecondsClamped: Int64 {
        let (seconds, attoseconds) = components
        let (secondNanos, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return secondNanos.addingClamped(attoseconds / 1_000_000_000)
    }
}

extension Int64 {
    /// `self + other`, saturating at `Int64.min` and `Int64.max` instead of trapping.
    @usableFromInline
    func addingClamped(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        if overflow { return other > 0 ? .max : .min }
        return sum
    }
}
