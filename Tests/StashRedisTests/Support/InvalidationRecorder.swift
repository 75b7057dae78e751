#if Redis
import Foundation
import Stash
import StashRedis

/// Collects invalidations delivered to a tier (or applied by a cache) and lets a
/// test wait for one (an event, with a generous deadline; no fixed sleep).
final class InvalidationRecorder: Sendable {
    private struct Waiter {
        var invalidation: RemoteInvalidation
        var occurrence: Int
        var event: AwaitedEvent
    }

    private struct State {
        var received: [RemoteInvalidation] = []
        var waiters: [Waiter] = []
    }
    private let state = LockedValue(State())

    var received: [RemoteInvalidation] { state.withLock { $0.received } }

    var handler: @Sendable (RemoteInvalidation) -> Void {
        { invalidation in
            let due: [AwaitedEvent] = self.state.withLock { state in
                state.received.append(invalidation)
                let count = state.received.filter { $0 == invalidation }.count
                let due = state.waiters.filter { $0.invalidation == invalidation && $0.occurrence <= count }
                state.waiters.removeAll { $0.invalidation == invalidation && $0.occurrence <= count }
                return due.map(\.event)
            }
            for event in due { event.raise() }
        }
    }

    /// An event raised when `invalidation` has arrived `occurrence` times (the first, by default).
    func event(for invalidation: RemoteInvalidation, occurrence: Int = 1) -> AwaitedEvent {
        let event = AwaitedEvent("invalidation \(invalidation) #\(occurrence)")
        let already: Bool = state.withLock { state in
            if state.received.filter({ $0 == invalidation }).count >= occurrence { return true }
            state.waiters.append(Waiter(invalidation: invalidation, occurrence: occurrence, event: event))
            return false
        }
        if already { event.raise() }
        return event
    }

    /// Waits until `invalidation` has arrived `occurrence` times (the first, by default).
    ///
    /// - Throws: ``EventTimedOut`` after `timeout` (``defaultWaitTimeout`` by default).
    func wait(
        for invalidation: RemoteInvalidation, occurrence: Int = 1, timeout: Duration = defaultWaitTimeout,
        fileID: String = #fileID, line: Int = #line
    ) async throws {
        try await event(for: invalidation, occurrence: occurrence).wait(timeout: timeout, fileID: fileID, line: line)
    }

    /// Waits until each of `invalidations` has arrived `occurrence` times, all within one `timeout`.
    func wait(
        forEach invalidations: [RemoteInvalidation], occurrence: Int = 1, timeout: Duration = defaultWaitTimeout,
        fileID: String = #fileID, line: Int = #line
    ) async throws {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        let events = invalidations.map { event(for: $0, occurrence: occurrence) }
        for event in events {
            try await event.wait(timeout: max(.zero, ContinuousClock.now.duration(to: deadline)), fileID: fileID, line: line)
        }
    }
}
#endif  // Redis
