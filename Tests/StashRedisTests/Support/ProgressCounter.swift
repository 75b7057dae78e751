import Stash

/// Counts operations done by concurrent workers and lets a test wait until a
/// number is reached (an event, not a time).
final class ProgressCounter: Sendable {
    private struct State {
        var count = 0
        var waiters: [(target: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }
    private let state = LockedValue(State())

    var count: Int { state.withLock { $0.count } }

    func increment() {
        let due: [CheckedContinuation<Void, Never>] = state.withLock { state in
            state.count += 1
            let due = state.waiters.filter { $0.target <= state.count }.map(\.continuation)
            state.waiters.removeAll { $0.target <= state.count }
            return due
        }
        for continuation in due { continuation.resume() }
    }

    /// Returns once `increment()` has been called `target` times in all.
    func wait(until target: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now: Bool = state.withLock { state in
                if state.count >= target { return true }
                state.waiters.append((target, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }
}
