import Stash

/// A one-shot gate: the task that asks the origin for a key holds it; others for the
/// same key wait until it opens (nginx's `proxy_cache_lock`).
final class FetchGate: Sendable {
    private let state = LockedValue((opened: false, waiters: [CheckedContinuation<Void, Never>]()))

    /// Suspends until ``open()`` has been called (returns at once if it has).
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                if state.opened { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// How many tasks wait: for tests that check coalescing.
    var waiterCount: Int { state.withLock { $0.waiters.count } }

    /// Opens the gate and wakes every waiter. Idempotent.
    func open() {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.opened = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in woken { waiter.resume() }
    }
}
