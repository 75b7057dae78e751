#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A condition variable over `pthread_cond_t`, used with a ``Lock``: a thread
/// holding the lock waits until another one signals that the state it guards
/// has changed.
///
/// - Important: Call ``wait(_:)`` and ``signal()`` with the lock held; a wait
///   may return spuriously, so wait in a loop that re-checks the guarded state.
final class Condition: @unchecked Sendable {
    // @unchecked Sendable: the only state is the pthread condition, which exists to
    // be shared between threads; it is initialised once and never reassigned.
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    init() {
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        let result = pthread_cond_init(condition, nil)
        precondition(result == 0, "pthread_cond_init failed: \(result)")
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
    }

    /// Releases `lock`, which the caller holds, blocks until woken, and takes it
    /// again before returning.
    ///
    /// - Complexity: Blocks until another thread calls ``signal()`` (or spuriously).
    func wait(_ lock: Lock) {
        let result = pthread_cond_wait(condition, lock.mutex)
        assert(result == 0, "pthread_cond_wait failed: \(result)")
    }

    /// Wakes one thread waiting on this condition, if any.
    ///
    /// - Complexity: O(1); never blocks.
    func signal() {
        let result = pthread_cond_signal(condition)
        assert(result == 0, "pthread_cond_signal failed: \(result)")
    }
}
