#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The memory cache's policy lock: the project's ``Lock`` (a pthread mutex,
/// which the thread sanitizer understands), except that on glibc the mutex is
/// adaptive (`PTHREAD_MUTEX_ADAPTIVE_NP`): a thread that finds it held spins
/// briefly before sleeping in the kernel.
///
/// Why: the policy lock is held for a few hundred nanoseconds by writers that
/// other threads, mostly reading, meet now and then. A default glibc mutex puts
/// the second thread to sleep at once, and the wake-up costs microseconds, far
/// more than the wait would have: with two threads that turned a second core
/// into a slowdown (issue #26). The spin is bounded (glibc's default, about a
/// hundred tries), so a holder that is descheduled (4 threads on 2 cores) costs
/// a short spin and then the same sleep as before. The index stripe locks use
/// the same attribute (``adaptiveMutexAttributes(_:)``).
///
/// - Important: Not recursive. Never call back into code that takes the same
///   lock from inside ``withLock(_:)``.
@usableFromInline
final class AdaptiveLock: @unchecked Sendable {
    // @unchecked Sendable: the only state is the pthread mutex, which exists to be
    // shared between threads; it is initialised once and never reassigned.
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let result = withAdaptiveMutexAttributes { pthread_mutex_init(mutex, $0) }
        precondition(result == 0, "pthread_mutex_init failed: \(result)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Blocks until the lock is acquired.
    @inlinable
    func lock() {
        let result = pthread_mutex_lock(mutex)
        assert(result == 0, "pthread_mutex_lock failed: \(result)")
    }

    /// Releases the lock. Must be called by the thread that holds it.
    @inlinable
    func unlock() {
        let result = pthread_mutex_unlock(mutex)
        assert(result == 0, "pthread_mutex_unlock failed: \(result)")
    }

    /// Runs `body` with the lock held.
    ///
    /// - Complexity: O(1) plus the cost of `body`. Blocks while another thread holds the lock.
    @inlinable
    func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// Calls `body` with mutex attributes for the memory cache's locks: adaptive on
/// glibc in release builds; error-checking in debug builds, as ``Lock`` is, so
/// that tests catch a lock taken twice or released by the wrong thread.
func withAdaptiveMutexAttributes<Result>(_ body: (UnsafePointer<pthread_mutexattr_t>) -> Result) -> Result {
    var attributes = pthread_mutexattr_t()
    pthread_mutexattr_init(&attributes)
    defer { pthread_mutexattr_destroy(&attributes) }
    #if DEBUG
    pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
    #elseif canImport(Glibc)
    pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
    #endif
    return body(&attributes)
}
