/// The unstructured tasks an object starts for work that outlives the call that asked for it (a
/// change on its way to a remote tier, an invalidation applied to the disk tier, a background
/// revalidation), counted so that its `close()` can wait for them before closing what they use.
///
/// The one place such tasks start in `Cache` and `HTTPCache`: a task that is not started here is
/// one that shutdown cannot wait for.
///
/// ```swift
/// background.start { await link.send(change, ticket: ticket) }
/// let finished = await background.waitUntilIdle(timeout: .seconds(5), clock: clock)
/// ```
///
/// Thread-safety: all state is behind one lock; waiting suspends, never blocks.
package final class BackgroundTasks: Sendable {
    private struct State {
        var running = 0
        var nextWaiter = 0
        var idleWaiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = LockedValue(State())

    package init() {}

    /// The tasks started and not yet finished.
    package var count: Int { state.withLock { $0.running } }

    /// Runs `operation` in a new task, counted until it returns.
    ///
    /// - Complexity: O(1).
    package func start(_ operation: @escaping @Sendable () async -> Void) {
        state.withLock { $0.running += 1 }
        Task {
            await operation()
            self.finishOne()
        }
    }

    private func finishOne() {
        let waiters: [CheckedContinuation<Void, Never>] = state.withLock { state in
            state.running -= 1
            guard state.running == 0 else { return [] }
            defer { state.idleWaiters = [:] }
            return Array(state.idleWaiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once no task is running (tasks started meanwhile are waited for too), or when the
    /// calling task is cancelled.
    package func waitUntilIdle() async {
        let id: Int? = state.withLock { state in
            guard state.running > 0 else { return nil }
            state.nextWaiter += 1
            return state.nextWaiter
        }
        guard let id else { return }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now: Bool = state.withLock { state in
                    if state.running == 0 || Task.isCancelled { return true }
                    state.idleWaiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.idleWaiters.removeValue(forKey: id) }?.resume()
        }
    }

    /// ``waitUntilIdle()``, for at most `timeout` on `clock`.
    ///
    /// - Returns: Whether every task finished in time.
    package func waitUntilIdle(timeout: Duration, clock: any CacheClock) async -> Bool {
        if count == 0 { return true }
        let deadline = clock.nanosecondsNow.addingClamped(timeout.nanosecondsClamped)
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await self.waitUntilIdle()
                return self.count == 0
            }
            group.addTask {
                try? await clock.sleep(until: deadline)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }
}
