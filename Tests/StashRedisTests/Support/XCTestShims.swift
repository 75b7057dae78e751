#if Redis
import Foundation
import Stash
import StashRedis
import XCTest

// What the suites still on XCTest use while the others move to Swift Testing; goes with the last of them.

/// Throws `XCTSkip` with `message`.
func skipXCTest(_ message: String) throws -> Never {
    throw XCTSkip(message)
}

extension InvalidationRecorder {
    /// An expectation fulfilled when `invalidation` has arrived `occurrence` times (the first, by default).
    func expectation(for invalidation: RemoteInvalidation, occurrence: Int = 1) -> XCTestExpectation {
        let expectation = XCTestExpectation(description: "invalidation \(invalidation) #\(occurrence)")
        let event = event(for: invalidation, occurrence: occurrence)
        Task {
            try? await event.wait()
            if event.isRaised { expectation.fulfill() }
        }
        return expectation
    }
}

extension ProgressCounter {
    /// An expectation fulfilled once `increment()` has been called `target` times in all.
    func expectation(reaching target: Int) -> XCTestExpectation {
        let expectation = XCTestExpectation(description: "\(target) operations")
        let event = event(reaching: target)
        Task {
            try? await event.wait()
            if event.isRaised { expectation.fulfill() }
        }
        return expectation
    }
}
#endif  // Redis
