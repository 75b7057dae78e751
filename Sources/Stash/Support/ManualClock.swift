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
