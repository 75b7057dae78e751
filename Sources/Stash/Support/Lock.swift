#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A non-recursive mutual-exclusion lock over `pthread_mutex_t`.
///
/// Chosen over `Synchronization.Mutex` because it measured cheaper uncontended
/// when it was chosen, and because the thread sanitizer reports false races on
/// `Mutex`-guarded state but understands pthread (the figures, and a later run
/// that could not tell the two apart: docs/benchmarks.md, "Primitives").
/// Modelled on swift-nio's `NIOLock`: the mutex lives in its own allocation so
/// its address never moves.
///
/// - Important: Not recursive. Never call back into code that takes the same
///   lock from inside ``withLock(_:)``.
///
/// `package` so the package's other modules (StashHTTP) share this lock instead of a copy.
@usableFromInline
package final class Lock: @unchecked Sendable {
    // @unchecked Sendable: the only state is the pthread mutex, which exists to be
    // shared between threads; it is initialised once and never reassigned.
    @usableFromInline
    let mutex: UnsafeMutablePointer<pthread_mutex_t>

    @usableFromInline
    /// Creates a lock.
    ///
    /// - Parameter adaptive: Whether a thread that finds the lock held spins briefly before
    ///   sleeping in the kernel (glibc's `PTHREAD_MUTEX_ADAPTIVE_NP`; elsewhere the default
    ///   mutex). Default `false`. For locks held a few hundred nanoseconds that other threads
    ///   meet often, such as the memory cache's: a default glibc mutex puts the second thread to
    ///   sleep at once, and the wake-up costs microseconds, far more than the wait would have
    ///   (issue #26). The spin is bounded (glibc's default, about a hundred tries), so a holder
    ///   that is descheduled costs a short spin and then the same sleep as before.
    package init(adaptive: Bool = false) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let result = withMutexAttributes(adaptive: adaptive) { pthread_mutex_init(mutex, $0) }
        precondition(result == 0, "pthread_mutex_init failed: \(result)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Blocks until the lock is acquired.
    @inlinable
    package func lock() {
        let result = pthread_mutex_lock(mutex)
        assert(result == 0, "pthread_mutex_lock failed: \(result)")
    }

    /// Releases the lock. Must be called by the thread that holds it.
    @inlinable
    package func unlock() {
        let result = pthread_mutex_unlock(mutex)
        assert(result == 0, "pthread_mutex_unlock failed: \(result)")
    }

    /// Acquires the lock if no thread holds it, without blocking.
    ///
    /// - Returns: Whether the lock is now held by the caller (who must unlock it).
    @inlinable
    package func tryLock() -> Bool {
        pthread_mutex_trylock(mutex) == 0
    }

    /// Runs `body` with the lock held.
    ///
    /// - Complexity: O(1) plus the cost of `body`. Blocks while another thread holds the lock.
    @inlinable
    package func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// Calls `body` with the attributes of the package's mutexes: error-checking in debug builds, so
/// that tests catch a lock taken twice or released by the wrong thread; adaptive on glibc in
/// release builds when `adaptive` (see ``Lock/init(adaptive:)``).
package func withMutexAttributes<Result>(
    adaptive: Bool, _ body: (UnsafePointer<pthread_mutexattr_t>) -> Result
) -> Result {
    var attributes = pthread_mutexattr_t()
    pthread_mutexattr_init(&attributes)
    defer { pthread_mutexattr_destroy(&attributes) }
    #if DEBUG
    pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
    #elseif canImport(Glibc)
    if adaptive { pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP)) }
    #endif
    return body(&attributes)
}
