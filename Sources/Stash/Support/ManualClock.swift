/// A clock that moves only when told to: for tests.
///
/// ```swift
/// let clock = ManualClock()
/// let cache = MemoryCache<String, Int>(configuration: .init(clock: clock))
/// cache.setValue(1, forKey: "a", ttl: .seconds(10))
/// clock.advance(by: .seconds(11))
/// cache.value(forKey: "a")   // nil: expired
/// ```
///
/// Tasks that ``sleep(until:)`` on it (a load's timeout, say) wake when
/// ``advance(by:)`` reaches their deadline, so a test of a timeout never waits
/// for real time to pass.
///
/// Thread-safe: reads, advances and sleeps are serialised by a lock.
public final class ManualClock: CacheClock, Sendable {
    private struct State {
        var now: Int64
        var nextSleeperID: UInt64 = 0
        var sleepers: [UInt64: (deadline: Int64, continuation: CheckedContinuation<Void, any Error>)] = [:]
    }

    private let state: LockedValue<State>

    /// Creates a clock that reads `start` nanoseconds. Defaults to 0.
    public init(start: Int64 = 0) {
        state = LockedValue(State(now: start))
    }

    /// The time the clock was last set to.
    ///
    /// - Complexity: O(1). Thread-safe.
    public var nanosecondsNow: Int64 {
        state.withLock { $0.now }
    }

    /// Moves the clock forward, waking every task sleeping until a time it
    /// reaches.
    ///
    /// - Parameter duration: How far to move. Must not be negative.
    /// - Complexity: O(s) in the number of sleeping tasks. Thread-safe.
    public func advance(by duration: Duration) {
        let step = duration.nanosecondsClamped
        precondition(step >= 0, "ManualClock cannot go backwards")
        let woken = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.now = state.now.addingClamped(step)
            guard !state.sleepers.isEmpty else { return [] }
            let now = state.now
            let due = state.sleepers.filter { $0.value.deadline <= now }
            for id in due.keys { state.sleepers[id] = nil }
            return due.values.map(\.continuation)
        }
        for continuation in woken {
            continuation.resume()
        }
    }

    /// The number of tasks sleeping on this clock, so that a test can wait
    /// until a timeout is armed before it advances the clock.
    ///
    /// - Complexity: O(1). Thread-safe.
    public var sleeperCount: Int {
        state.withLock { $0.sleepers.count }
    }

    /// Suspends until ``advance(by:)`` moves the clock to `deadline` or later;
    /// returns at once if it is already there.
    ///
    /// - Throws: `CancellationError` if the task is cancelled first.
    public func sleep(until deadline: Int64) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextSleeperID += 1
            return state.nextSleeperID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Registered under the lock after checking for cancellation: a
                // cancellation after the check runs the handler below, which
                // takes the same lock and so finds the sleeper.
                let immediate = state.withLock { state -> Result<Void, any Error>? in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if state.now >= deadline { return .success(()) }
                    state.sleepers[id] = (deadline, continuation)
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            let continuation = state.withLock { $0.sleepers.removeValue(forKey: id)?.continuation }
            continuation?.resume(throwing: CancellationError())
        }
    }
}
