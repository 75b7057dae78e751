import Foundation
import Stash
import StashRedis
import XCTest

/// Collects invalidations delivered to a tier and lets a test wait for one
/// (an event, with a generous deadline; no fixed sleep).
final class InvalidationRecorder: Sendable {
    private struct State {
        var received: [RemoteInvalidation] = []
        var waiters: [(RemoteInvalidation, XCTestExpectation)] = []
    }
    private let state = LockedValue(State())

    var received: [RemoteInvalidation] { state.withLock { $0.received } }

    var handler: @Sendable (RemoteInvalidation) -> Void {
        { invalidation in
            let fulfilled: [XCTestExpectation] = self.state.withLock { state in
                state.received.append(invalidation)
                let matching = state.waiters.filter { $0.0 == invalidation }.map(\.1)
                state.waiters.removeAll { $0.0 == invalidation }
                return matching
            }
            for expectation in fulfilled { expectation.fulfill() }
        }
    }

    /// An expectation fulfilled when `invalidation` arrives (or has already arrived).
    func expectation(for invalidation: RemoteInvalidation) -> XCTestExpectation {
        let expectation = XCTestExpectation(description: "invalidation \(invalidation)")
        let already: Bool = state.withLock { state in
            if state.received.contains(invalidation) { return true }
            state.waiters.append((invalidation, expectation))
            return false
        }
        if already { expectation.fulfill() }
        return expectation
    }
}
