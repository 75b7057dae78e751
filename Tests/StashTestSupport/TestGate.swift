import Stash

/// A gate that tasks wait at until a test opens it: for holding a loader, an origin or a
/// background job still while the test arranges callers around it. The one gate of every test
/// target.
///
/// Every wait is bounded: a task still waiting after ``defaultWaitTimeout`` (a test that never
/// opens the gate, or a regression that never reaches the point that opens it) gets
/// ``WaitTimedOut``, and the gate opens for every other waiter, so that the test fails instead
/// of hanging. The clock only bounds the wait; progress is driven by ``open()``.
///
/// Its waiters ignore cancellation (tests hold work that ignores it at a gate), which is why it
/// parks them itself rather than in Stash's `WaiterSet`, whose waits return when cancelled.
///
/// Thread-safety: every method may be called from any thread or task.
public final class TestGate: Sendable {
    private struct Waiter {
        let id: Int
        let continuation: CheckedContinuation<Void, any Error>
        let watchdog: Task<Void, Never>
    }

    private struct State {
        var isOpen = false
        var nextID = 0
        var waiters: [Waiter] = []
    }

    private let state = LockedValue(State())
    private let timeout: Duration

    /// A closed gate whose waits give up after `timeout` (``defaultWaitTimeout`` by default).
    public init(timeout: Duration = defaultWaitTimeout) {
        self.timeout = timeout
    }

    /// Suspends until ``open()``; returns at once once the gate is open.
    ///
    /// - Throws: ``WaitTimedOut`` when the gate stays closed for the gate's timeout (then it
    ///   opens for every other waiter).
    public func wait(fileID: String = #fileID, line: Int = #line) async throws {
        let timeout = self.timeout
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let admitted = state.withLock { state -> Bool in
                guard !state.isOpen else { return true }
                let id = state.nextID
                state.nextID += 1
                let watchdog = Task { [weak self] in
                    guard (try? await Task.sleep(for: timeout)) != nil else { return }
                    self?.giveUp(id, error: WaitTimedOut(timeout: timeout, location: "\(fileID):\(line)"))
                }
                state.waiters.append(Waiter(id: id, continuation: continuation, watchdog: watchdog))
                return false
            }
            if admitted { continuation.resume() }
        }
    }

    /// ``wait(fileID:line:)`` where the caller cannot throw (a detached job, a non-throwing
    /// closure): a timeout still opens the gate, and the test fails on what it then finds.
    public func waitIgnoringTimeout(fileID: String = #fileID, line: Int = #line) async {
        try? await wait(fileID: fileID, line: line)
    }

    /// Lets every waiting and later task through.
    public func open() {
        let waiters = state.withLock { state -> [Waiter] in
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters {
            waiter.watchdog.cancel()
            waiter.continuation.resume()
        }
    }

    /// Whether ``open()`` was called (or a wait timed out).
    public var isOpen: Bool { state.withLock { $0.isOpen } }

    /// How many tasks wait at the gate.
    public var waitingCount: Int { state.withLock { $0.waiters.count } }

    /// The waiter `id` timed out: it gets `error`, and the gate opens for the others.
    private func giveUp(_ id: Int, error: WaitTimedOut) {
        let (late, others) = state.withLock { state -> (Waiter?, [Waiter]) in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return (nil, []) }
            let late = state.waiters.remove(at: index)
            state.isOpen = true
            defer { state.waiters = [] }
            return (late, state.waiters)
        }
        late?.continuation.resume(throwing: error)
        for waiter in others {
            waiter.watchdog.cancel()
            waiter.continuation.resume()
        }
    }
}
