/// The unstructured tasks an object starts for work that outlives the call that asked for it (a
/// change on its way to a remote tier, an invalidation applied to the disk tier, a refresh-ahead
/// reload, a background revalidation), counted so that its `close()` can wait for them before
/// closing what they use.
///
/// Every such task of `Cache` and `HTTPCache` is counted here: one that is not is one that
/// shutdown cannot wait for.
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
        var idleWaiters = WaiterSet()
    }

    private let state = LockedValue(State())

    package init() {}

    /// The tasks started and not yet finished.
    package var count: Int { state.withLock { $0.running } }

    /// Runs `operation` in a new task, counted until it returns.
    ///
    /// - Complexity: O(1).
    package func start(_ operation: @escaping @Sendable () async -> Void) {
        begin()
        Task {
            await operation()
            self.end()
        }
    }

    /// Counts work that runs in a task started elsewhere (a load's flight); call ``end()`` once
    /// when it finishes, or at once if it never starts.
    package func begin() {
        state.withLock { $0.running += 1 }
    }

    /// Ends work counted by ``begin()``.
    package func end() {
        let waiters: [CheckedContinuation<Void, Never>] = state.withLock { state in
            state.running -= 1
            guard state.running == 0 else { return [] }
            return state.idleWaiters.takeAll()
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once no task is running (tasks started meanwhile are waited for too), or when the
    /// calling task is cancelled.
    package func waitUntilIdle() async {
        while !Task.isCancelled {
            // Returns once the count has been 0: a task started since is waited for by the next turn.
            await state.wait(on: \.idleWaiters) { $0.running == 0 }
            if count == 0 { return }
        }
    }

    /// ``waitUntilIdle()``, for at most `timeout` on `clock`.
    ///
    /// - Returns: Whether every task finished in time (`false` also when the caller is cancelled).
    package func waitUntilIdle(timeout: Duration, clock: any CacheClock) async -> Bool {
        if count == 0 { return true }
        return await finishes(within: timeout, on: clock) { await self.waitUntilIdle() }
    }
}
