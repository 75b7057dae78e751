#if Redis
import Logging
import Stash

/// Stops calling Redis after consecutive failures, then lets one probe through
/// after a cool-down (closed → open → half-open → closed).
///
/// The cool-down starts at an eighth of `openDuration` and doubles after each
/// failed probe, up to `openDuration`: a short outage ends for the callers soon
/// after Redis answers again, and a long one costs at most one probe per
/// `openDuration`. (With the default 1 s: probes 125 ms, 375 ms, 875 ms, 1.875 s,
/// 2.875 s… after opening.)
///
/// While open, calls fail at once with `.unavailable` instead of each paying a
/// connect or command timeout. The outage is logged once when the breaker
/// opens and once when it closes again, never per call.
///
/// Thread-safety: all state is behind one lock; time comes from the injected clock.
final class RedisCircuitBreaker: Sendable {
    enum Phase: Equatable, Sendable {
        case closed
        case open
        case halfOpen
    }

    private struct State {
        var phase = Phase.closed
        var consecutiveFailures = 0
        var openedAt: Int64 = 0
        /// How long to stay open this time: grows with each failed probe.
        var coolDown: Int64 = 0
        var outageStartedAt: Int64 = 0
        var probeInFlight = false
    }

    let failureThreshold: Int
    let openDuration: Duration
    /// The first cool-down and the longest, in nanoseconds.
    private let firstCoolDown: Int64, longestCoolDown: Int64
    private let clock: any CacheClock
    private let logger: Logger
    private let state = LockedValue(State())

    init(failureThreshold: Int, openDuration: Duration, clock: any CacheClock, logger: Logger) {
        self.failureThreshold = max(1, failureThreshold)
        self.openDuration = openDuration
        longestCoolDown = max(0, openDuration.nanosecondsClamped)
        firstCoolDown = longestCoolDown / 8
        self.clock = clock
        self.logger = logger
    }

    var phase: Phase { state.withLock { $0.phase } }

    /// Whether a call may go to Redis now; when `false`, fail it with `.unavailable`.
    ///
    /// Reads the clock only while open: a closed breaker (the usual case) costs one lock.
    func allowsCall() -> Bool {
        state.withLock { state in
            switch state.phase {
            case .closed:
                return true
            case .open:
                guard clock.nanosecondsNow - state.openedAt >= state.coolDown else { return false }
                state.phase = .halfOpen
                state.probeInFlight = true
                return true
            case .halfOpen:
                if state.probeInFlight { return false }
                state.probeInFlight = true
                return true
            }
        }
    }

    /// Lets the next call through as a probe at once when the breaker is open: for a sign,
    /// from outside the calls, that Redis answers again (the invalidation subscription
    /// restored). Does nothing when closed or when a probe is already under way.
    func allowProbeNow() {
        state.withLock { state in
            guard state.phase == .open else { return }
            state.phase = .halfOpen
            state.probeInFlight = false
        }
    }

    /// Records a call that reached Redis and got an answer (any answer, error replies included).
    func recordSuccess() {
        let outage: Int64? = state.withLock { state in
            state.consecutiveFailures = 0
            state.probeInFlight = false
            guard state.phase != .closed else { return nil }
            state.phase = .closed
            return clock.nanosecondsNow - state.outageStartedAt
        }
        if let outage {
            // At debug level, as the opening: the outage is reported once, by the `Cache` the tier
            // serves, whose incident log sees every failed and answered call.
            logger.debug("Redis is reachable again; the circuit breaker closed",
                         metadata: ["outage_ms": "\(outage / 1_000_000)"])
        }
    }

    /// Records a call that failed to reach Redis (connect, timeout, closed connection, garbled reply).
    func recordFailure(_ error: RedisError) {
        let now = clock.nanosecondsNow
        let opened: Bool = state.withLock { state in
            state.probeInFlight = false
            switch state.phase {
            case .closed:
                state.consecutiveFailures += 1
                guard state.consecutiveFailures >= failureThreshold else { return false }
                state.phase = .open
                state.openedAt = now
                state.outageStartedAt = now
                state.coolDown = firstCoolDown
                return true
            case .halfOpen:
                // The probe failed: wait twice as long before the next one.
                state.phase = .open
                state.openedAt = now
                state.coolDown = min(state.coolDown.multipliedClamped(by: 2), longestCoolDown)
                return false
            case .open:
                state.openedAt = now
                return false
            }
        }
        if opened {
            // At debug level: the `Cache` the tier serves logs the outage once, as a warning, when
            // its first call fails (before the breaker opens), and its end once (issue #27: one
            // outage, one report).
            logger.debug("Redis is unreachable; the circuit breaker opened and calls fail fast until a probe succeeds",
                         metadata: ["error": "\(error)"])
        }
    }

    /// Whether `error` says Redis could not be reached, as opposed to Redis refusing a command.
    static func isOutage(_ error: RedisError) -> Bool {
        switch error.code {
        case .connectionFailed, .connectionClosed, .timeout, .unavailable, .protocolViolation, .clusterRedirectionLoop:
            return true
        default:
            return false
        }
    }
}
#endif  // Redis
