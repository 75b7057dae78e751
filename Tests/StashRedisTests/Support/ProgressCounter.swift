#if Redis
import Stash
import XCTest

/// Counts operations done by concurrent workers and lets a test wait until a
/// number is reached (an event, not a time, with a generous deadline).
final class ProgressCounter: Sendable {
    private struct State {
        var count = 0
        var waiters: [(target: Int, expectation: XCTestExpectation)] = []
    }
    private let state = LockedValue(State())

    var count: Int { state.withLock { $0.count } }

    func increment() {
        let due: [XCTestExpectation] = state.withLock { state in
            state.count += 1
            let due = state.waiters.filter { $0.target <= state.count }.map(\.expectation)
            state.waiters.removeAll { $0.target <= state.count }
            return due
        }
        for expectation in due { expectation.fulfill() }
    }

    /// An expectation fulfilled once `increment()` has been called `target` times in all.
    func expectation(reaching target: Int) -> XCTestExpectation {
        let expectation = XCTestExpectation(description: "\(target) operations")
        let now: Bool = state.withLock { state in
            if state.count >= target { return true }
            state.waiters.append((target, expectation))
            return false
        }
        if now { expectation.fulfill() }
        return expectation
    }
}
#endif  // Redis
