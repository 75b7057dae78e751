import Stash

/// A one-shot gate: the task that asks the origin for a key holds it; others for the
/// same key wait until it opens (nginx's `proxy_cache_lock`). Built on Stash's one async
/// gate, ``WaiterSet`` in a ``LockedValue``.
final class FetchGate: Sendable {
    private struct State {
        var isOpen = false
        var waiters = WaiterSet()
    }

    private let state = LockedValue(State())

    /// Suspends until ``open()`` has been called (returns at once if it has), or until the
    /// waiting task is cancelled.
    func wait() async {
        await state.wait(on: \.waiters) { $0.isOpen }
    }

    /// How many tasks wait: for tests that check coalescing.
    var waiterCount: Int { state.withLock { $0.waiters.count } }

    /// Opens the gate and wakes every waiter. Idempotent.
    func open() {
        let woken = state.withLock { state in
            state.isOpen = true
            return state.waiters.takeAll()
        }
        for waiter in woken { waiter.resume() }
    }
}
