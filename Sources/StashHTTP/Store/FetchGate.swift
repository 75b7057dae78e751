import Stash

/// A one-shot gate: the task that asks the origin for a key holds it; others for the
/// same key wait until it opens (nginx's `proxy_cache_lock`).
final class FetchGate: @unchecked Sendable {
    // @unchecked Sendable: `opened` and `waiters` are only touched with `lock` held.
    private let lock = Lock()
    private var opened = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// Suspends until ``open()`` has been called (returns at once if it has).
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = lock.withLock { () -> Bool in
                if opened { return true }
                waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// How many tasks wait: for tests that check coalescing.
    var waiterCount: Int { lock.withLock { waiters.count } }

    /// Opens the gate and wakes every waiter. Idempotent.
    func open() {
        let woken = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            opened = true
            defer { waiters = [] }
            return waiters
        }
        for waiter in woken { waiter.resume() }
    }
}
