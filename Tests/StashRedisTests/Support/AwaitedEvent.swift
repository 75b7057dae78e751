#if Redis
import Stash

/// Something a test waits for, such as an invalidation's arrival or a number of operations done:
/// raised once by whoever sees it happen, waited for with a bound. The wait is woken by the event,
/// never by polling; the clock only bounds it.
final class AwaitedEvent: Sendable {
    private struct State {
        var isRaised = false
        var nextWaiter = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        /// Waits cancelled before they were registered.
        var cancelled: Set<Int> = []
    }
    private let state = LockedValue(State())
    /// What the event is, for the message when a wait runs out.
    let description: String

    init(_ description: String) {
        self.description = description
    }

    /// Whether ``raise()`` has been called.
    var isRaised: Bool { state.withLock { $0.isRaised } }

    /// Marks the event as happened and wakes every wait. Idempotent.
    func raise() {
        let waiters = state.withLock { state in
            state.isRaised = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the event is raised.
    ///
    /// - Throws: ``EventTimedOut`` if it is not raised within `timeout`; `CancellationError` if the
    ///   test is cancelled (its time limit) first.
    func wait(timeout: Duration = defaultWaitTimeout, fileID: String = #fileID, line: Int = #line) async throws {
        if isRaised { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.raisedOrCancelled() }
            group.addTask { try? await Task.sleep(for: timeout) }
            // Whichever ends first ends the other.
            await group.next()
            group.cancelAll()
        }
        if isRaised { return }
        try Task.checkCancellation()
        throw EventTimedOut(event: description, timeout: timeout, location: "\(fileID):\(line)")
    }

    /// Returns when the event is raised or the task is cancelled.
    private func raisedOrCancelled() async {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state in
                    if state.isRaised || state.cancelled.remove(id) != nil { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                if let waiter = state.waiters.removeValue(forKey: id) { return waiter }
                if !state.isRaised { state.cancelled.insert(id) }
                return nil
            }
            waiter?.resume()
        }
    }
}

/// Thrown by ``AwaitedEvent/wait(timeout:fileID:line:)`` when the event did not happen within the
/// bound: a regression makes the test fail, not hang.
struct EventTimedOut: Error, CustomStringConvertible {
    /// What was waited for.
    let event: String
    /// How long the wait lasted before it gave up.
    let timeout: Duration
    /// Where the wait was written, as `#fileID:#line`.
    let location: String

    var description: String {
        "\(event) did not happen within \(timeout) (waited for at \(location))"
    }
}
#endif  // Redis
