/// The tasks suspended until a condition on their owner's locked state holds: kept inside that
/// state (a field of the value a ``LockedValue`` guards), so that checking the condition and
/// parking a waiter happen under one lock, and no wake-up falls between them.
///
/// A waiter parks with ``LockedValue/wait(on:until:)``; the owner, whenever a change under its
/// lock makes the condition hold, takes the waiters with ``takeAll()`` and resumes them after
/// the lock is released.
///
/// ```swift
/// // waiting
/// await state.wait(on: \.idleWaiters) { $0.running == 0 }
/// // the owner, when `running` drops to 0
/// let waiters = state.withLock { state in state.running -= 1; return state.idleWaiters.takeAll() }
/// for waiter in waiters { waiter.resume() }
/// ```
///
/// Thread-safety: a value type, mutated only under its owner's lock.
package struct WaiterSet: Sendable {
    private var parked: [Int: CheckedContinuation<Void, Never>] = [:]
    private var lastID = 0

    package init() {}

    /// How many waiters are parked.
    package var count: Int { parked.count }

    /// Takes every parked waiter, for the caller to resume once it has released the lock.
    ///
    /// - Complexity: O(n) in the waiters.
    package mutating func takeAll() -> [CheckedContinuation<Void, Never>] {
        defer { parked = [:] }
        return Array(parked.values)
    }

    fileprivate mutating func reserveID() -> Int {
        lastID += 1
        return lastID
    }

    fileprivate mutating func park(_ waiter: CheckedContinuation<Void, Never>, id: Int) {
        parked[id] = waiter
    }

    fileprivate mutating func remove(_ id: Int) -> CheckedContinuation<Void, Never>? {
        parked.removeValue(forKey: id)
    }
}

extension LockedValue {
    /// Suspends until `isDone` holds for the guarded value, checked under the lock: at once if it
    /// holds now, else once the owner resumes the waiters of `waiters` (``WaiterSet/takeAll()``)
    /// after a change. Returns on cancellation too, so that no shutdown waits on it.
    ///
    /// The owner must resume the set's waiters whenever it makes `isDone` hold; a waiter resumed
    /// while it does not hold any more returns anyway (callers that need it to hold check again).
    ///
    /// - Parameters:
    ///   - waiters: The guarded value's ``WaiterSet`` for this condition.
    ///   - isDone: The condition, run under the lock: quick, and it must not take this lock.
    /// - Complexity: O(1) besides `isDone`. Suspends; never blocks a thread.
    package func wait(
        on waiters: WritableKeyPath<Value, WaiterSet> & Sendable, until isDone: (Value) -> Bool
    ) async {
        let id: Int? = withLock { value in
            isDone(value) ? nil : value[keyPath: waiters].reserveID()
        }
        guard let id else { return }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now: Bool = withLock { value in
                    if isDone(value) || Task.isCancelled { return true }
                    value[keyPath: waiters].park(continuation, id: id)
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            withLock { $0[keyPath: waiters].remove(id) }?.resume()
        }
    }
}
