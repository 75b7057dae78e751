#if Redis
import Foundation
import Stash
import StashRedis
import XCTest

/// Collects invalidations delivered to a tier (or applied by a cache) and lets a
/// test wait for one (an event, with a generous deadline; no fixed sleep).
final class InvalidationRecorder: Sendable {
    private struct Waiter {
        var invalidation: RemoteInvalidation
        var occurrence: Int
        var expectation: XCTestExpectation
    }

    private struct State {
        var received: [RemoteInvalidation] = []
        var waiters: [Waiter] = []
    }
    private let state = LockedValue(State())

    var received: [RemoteInvalidation] { state.withLock { $0.received } }

    var handler: @Sendable (RemoteInvalidation) -> Void {
        { invalidation in
            let fulfilled: [XCTestExpectation] = self.state.withLock { state in
                state.received.append(invalidation)
                let count = state.received.filter { $0 == invalidation }.count
                let due = state.waiters.filter { $0.invalidation == invalidation && $0.occurrence <= count }
                state.waiters.removeAll { $0.invalidation == invalidation && $0.occurrence <= count }
                return due.map(\.expectation)
            }
            for expectation in fulfilled { expectation.fulfill() }
        }
    }

    /// An expectation fulfilled when `invalidation` has arrived `occurrence` times (the first, by default).
    func expectation(for invalidation: RemoteInvalidation, occurrence: Int = 1) -> XCTestExpectation {
        let expectation = XCTestExpectation(description: "invalidation \(invalidation) #\(occurrence)")
        let already: Bool = state.withLock { state in
            if state.received.filter({ $0 == invalidation }).count >= occurrence { return true }
            state.waiters.append(Waiter(invalidation: invalidation, occurrence: occurrence, expectation: expectation))
            return false
        }
        if already { expectation.fulfill() }
        return expectation
    }
}
#endif  // Redis
