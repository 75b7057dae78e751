import Logging

/// Logs a failing dependency once per incident instead of once per failed call: the first
/// failure of an incident as a warning, the failures after it at a lower level (or not at all),
/// and the incident's end once, at info level.
///
/// An incident ends at the first success at least `quietPeriod` after its last failure, on
/// `clock`. With a quiet period of zero, the first success ends it. With one, a dependency that
/// answers once and fails again (a store that restarts and reloads, calls under way when it died
/// completing out of order) stays one incident, logged once, with one recovery.
///
/// ```swift
/// let incidents = IncidentLog(logger: logger, clock: clock, quietPeriod: .seconds(1))
/// do {
///     try await remote.setValue(value, forKey: key)
///     incidents.recordSuccess { _ in "the remote tier answers again" }
/// } catch {
///     incidents.recordFailure("the remote tier failed", metadata: ["error": "\(error)"])
/// }
/// ```
///
/// Thread-safety: thread-safe; logging happens outside its lock.
package final class IncidentLog: Sendable {
    private struct State {
        /// Failures in the current incident; 0 when there is none.
        var failures = 0
        /// When the last failure was recorded, on ``clock``.
        var lastFailureAt: Int64 = 0
    }

    private let state = LockedValue(State())
    private let clock: any CacheClock
    private let quietPeriod: Int64
    /// Where the incidents are logged.
    package let logger: Logger

    /// Creates a log with no incident under way.
    ///
    /// - Parameters:
    ///   - logger: Where incidents are logged.
    ///   - clock: The clock the quiet period is measured on. Defaults to ``SystemClock``.
    ///   - quietPeriod: How long after an incident's last failure a success ends it. Defaults to
    ///     zero: the first success ends it.
    package init(logger: Logger, clock: any CacheClock = SystemClock(), quietPeriod: Duration = .zero) {
        self.logger = logger
        self.clock = clock
        self.quietPeriod = quietPeriod.nanosecondsClamped
    }

    /// Whether an incident is under way.
    package var isFailing: Bool { state.withLock { $0.failures > 0 } }

    /// Records a failure: logs `message` as a warning if it starts an incident, else at `laterLevel`.
    ///
    /// - Parameters:
    ///   - message: What failed.
    ///   - metadata: The failure's details.
    ///   - laterLevel: The level of the failures after the first in one incident; `nil`, the
    ///     default, logs none of them.
    /// - Returns: Whether this failure started an incident.
    /// - Complexity: O(1); one lock.
    @discardableResult
    package func recordFailure(
        _ message: @autoclosure () -> Logger.Message,
        metadata: @autoclosure () -> Logger.Metadata? = nil,
        laterLevel: Logger.Level? = nil
    ) -> Bool {
        let now = clock.nanosecondsNow
        let isFirst = state.withLock { state -> Bool in
            state.failures += 1
            state.lastFailureAt = max(state.lastFailureAt, now)
            return state.failures == 1
        }
        if isFirst {
            logger.warning(message(), metadata: metadata())
        } else if let laterLevel {
            logger.log(level: laterLevel, message(), metadata: metadata())
        }
        return isFirst
    }

    /// Records a success: ends the incident under way, if its last failure is at least the quiet
    /// period old, and logs `message` at info level with the number of failures it had.
    ///
    /// - Parameter message: The recovery's message, given the incident's number of failures.
    /// - Returns: Whether this success ended an incident.
    /// - Complexity: O(1); one lock, and no clock read while no incident is under way.
    @discardableResult
    package func recordSuccess(_ message: (_ failures: Int) -> Logger.Message) -> Bool {
        let ended = state.withLock { state -> Int in
            guard state.failures > 0 else { return 0 }
            if quietPeriod > 0, clock.nanosecondsNow &- state.lastFailureAt < quietPeriod { return 0 }
            defer { state.failures = 0 }
            return state.failures
        }
        guard ended > 0 else { return false }
        logger.info(message(ended))
        return true
    }
}
