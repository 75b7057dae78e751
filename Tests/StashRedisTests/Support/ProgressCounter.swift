#if Redis
import Stash

/// Counts operations done by concurrent workers and lets a test wait until a
/// number is reached (an event, not a time, with a generous deadline).
final class ProgressCounter: Sendable {
    private struct State {
        var count = 0
        var waiters: [(target: Int, event: AwaitedEvent)] = []
    }
    private let state = LockedValue(State())

    var count: Int { state.withLock { $0.count } }

    func increment() {
        let due: [AwaitedEvent] = state.withLock { state in
            state.count += 1
            let due = state.waiters.filter { $0.target <= state.count }.map(\.event)
            state.waiters.removeAll { $0.target <= state.count }
            return due
        }
        for event in due { event.raise() }
    }

    /// An event raised once `increment()` has been called `target` times in all.
    func event(reaching target: Int) -> AwaitedEvent {
        let event = AwaitedEvent("\(target) operations")
        let now: Bool = state.withLock { state in
            if state.count >= target { return true }
            state.waiters.append((target, event))
            return false
        }
        if now { event.raise() }
        return event
    }

    /// Waits until `increment()` has been called `target` times in all.
    ///
    /// - Throws: ``EventTimedOut`` after `timeout` (``defaultWaitTimeout`` by default).
    func wait(
        reaching target: Int, timeout: Duration = defaultWaitTimeout, fileID: String = #fileID, line: Int = #line
    ) async throws {
        try await event(reaching: target).wait(timeout: timeout, fileID: fileID, line: line)
    }
}
#endif  // Redis
