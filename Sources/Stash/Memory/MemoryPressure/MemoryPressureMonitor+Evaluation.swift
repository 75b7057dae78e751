/// What the monitor remembers between samples.
struct PressureState: Equatable, Sendable {
    /// Whether the previous sample was under pressure.
    var isPressured = false
    /// When the last notification fired, in the clock's nanoseconds.
    var lastFiredAt: Int64?
    /// The previous `memory.events` sum; the baseline for the next increase.
    var lastEventCount: UInt64?
}

extension MemoryPressureMonitor {
    /// Decides whether a sample fires, and what to remember. Pure.
    ///
    /// Under pressure when PSI or the cgroup usage ratio is at or above its
    /// (enabled) threshold, or the event count grew since the last known
    /// count. The first count only sets the baseline; a smaller count (a reset
    /// counter) sets a new one. Fires on a rise into pressure, and while under
    /// pressure again once `cooldown` has passed since the last firing.
    ///
    /// - Complexity: O(1).
    static func evaluate(
        _ reading: MemoryPressureReading,
        after state: PressureState,
        configuration: Configuration,
        now: Int64
    ) -> (fires: Bool, state: PressureState) {
        var next = state
        var pressured = false
        if let threshold = configuration.psiThreshold, let psi = reading.psiSomeAvg10, psi >= threshold {
            pressured = true
        }
        if let threshold = configuration.cgroupUsageThreshold, let ratio = reading.cgroupUsageRatio,
            ratio >= threshold
        {
            pressured = true
        }
        if let count = reading.cgroupEventCount {
            if configuration.watchesCgroupEvents, let previous = state.lastEventCount, count > previous {
                pressured = true
            }
            next.lastEventCount = count
        }

        var fires = pressured && !state.isPressured
        if pressured, state.isPressured, let cooldown = configuration.cooldown, let last = state.lastFiredAt {
            let (elapsed, overflow) = now.subtractingReportingOverflow(last)
            fires = overflow || elapsed >= cooldown.nanosecondsClamped
        }
        next.isPressured = pressured
        if fires { next.lastFiredAt = now }
        return (fires, next)
    }
}
