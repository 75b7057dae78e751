import Stash

/// A one-shot gate: the task that asks the origin for a key holds it; others for the
/// same key wait until it opens (nginx's `proxy_cache_lock`), and learn whether the origin
/// request failed, so that one timed-out or unreachable origin fails them all at once instead
/// of being asked again by each in turn.
final class FetchGate: @unchecked Sendable {
    // @unchecked Sendable: `opened`, `failure` and `waiters` are only touched with `lock` held.
    private let lock = Lock()
    private var opened = false
    private var failure: (any Error)?
    private var waiters: [CheckedContinuation<(any Error)?, Never>] = []

    /// Suspends until ``open(failure:)`` has been called (returns at once if it has).
    ///
    /// - Returns: The failure the gate was opened with: `nil` when the origin request succeeded.
    @discardableResult
    func wait() async -> (any Error)? {
        await withCheckedContinuation { (continuation: CheckedContinuation<(any Error)?, Never>) in
            let resumeNow = lock.withLock { () -> Bool in
                if opened { return true }
                waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume(returning: lock.withLock { failure }) }
        }
    }

    /// How many tasks wait: for tests that check coalescing.
    var waiterCount: Int { lock.withLock { waiters.count } }

    /// Opens the gate and wakes every waiter. Only the first call counts.
    ///
    /// - Parameter failure: Why the origin request failed, handed to every waiter; `nil` (the
    ///   default) when it succeeded.
    func open(failure: (any Error)? = nil) {
        let woken = lock.withLock { () -> [CheckedContinuation<(any Error)?, Never>] in
            if opened { return [] }
            opened = true
            self.failure = failure
            defer { waiters = [] }
            return waiters
        }
        for waiter in woken { waiter.resume(returning: failure) }
    }
}
