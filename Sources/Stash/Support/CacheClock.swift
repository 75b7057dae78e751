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

    /// Suspends the calling task until the clock reads `deadline` or later.
    ///
    /// Used for timeouts (a load that takes too long), never on a cache's hit
    /// path. The default implementation sleeps for the difference between
    /// `deadline` and ``nanosecondsNow`` with `Task.sleep`; ``ManualClock``
    /// instead suspends until it is advanced past `deadline`.
    ///
    /// - Parameter deadline: A time on this clock, in nanoseconds.
    /// - Throws: `CancellationError` if the task is cancelled first.
    func sleep(until deadline: Int64) async throws
}

extension CacheClock {
    /// Sleeps with `Task.sleep` for the time left until `deadline`, or not at
    /// all when it has passed.
    ///
    /// - Throws: `CancellationError` if the task is cancelled first.
    public func sleep(until deadline: Int64) async throws {
        let remaining = deadline &- nanosecondsNow
        if remaining > 0 {
            try await Task.sleep(nanoseconds: UInt64(remaining))
        }
    }
}

extension Duration {
    /// The duration in whole nanoseconds, clamped to `Int64`'s range. `package`, for StashRedis's breaker.
    @usableFromInline
    package var nanosecondsClamped: Int64 {
        let (seconds, attoseconds) = components
        let (secondNanos, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return secondNanos.addingClamped(attoseconds / 1_000_000_000)
    }
}
