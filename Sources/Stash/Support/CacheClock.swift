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
