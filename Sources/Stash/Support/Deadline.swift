/// Runs `operation` in a task of its own and waits for it for at most `timeout` on `clock`, or
/// until the calling task is cancelled: a bound on work that may not honour cancellation (a
/// remote call without a timeout of its own). When the time is up the operation is cancelled and
/// left to finish on its own.
///
/// - Returns: Whether `operation` finished in time.
package func finishes(
    within timeout: Duration, on clock: any CacheClock, _ operation: @escaping @Sendable () async -> Void
) async -> Bool {
    let deadline = clock.nanosecondsNow.addingClamped(timeout.nanosecondsClamped)
    let race = DeadlineRace()
    return await withTaskCancellationHandler {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            race.begin(continuation)
            race.setWork(Task {
                await operation()
                race.finish(true)
            })
            race.setTimer(Task {
                try? await clock.sleep(until: deadline)
                race.finish(false)
            })
        }
    } onCancel: {
        race.finish(false)
    }
}

/// The state of one ``finishes(within:on:_:)``: the first of the work, the timer and the caller's
/// cancellation to finish answers; the other two tasks are cancelled.
private final class DeadlineRace: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Bool, Never>?
        var answer: Bool?
        var work: Task<Void, Never>?
        var timer: Task<Void, Never>?
    }

    private let state = LockedValue(State())

    func begin(_ continuation: CheckedContinuation<Bool, Never>) {
        let early: Bool? = state.withLock { state in
            guard let answer = state.answer else {
                state.continuation = continuation
                return nil
            }
            return answer
        }
        if let early { continuation.resume(returning: early) }
    }

    func setWork(_ task: Task<Void, Never>) { adopt(task) { $0.work = $1 } }
    func setTimer(_ task: Task<Void, Never>) { adopt(task) { $0.timer = $1 } }

    /// Keeps `task` to cancel at the end, or cancels it now if the race is over.
    private func adopt(_ task: Task<Void, Never>, _ keep: (inout State, Task<Void, Never>) -> Void) {
        let over: Bool = state.withLock { state in
            guard state.answer == nil else { return true }
            keep(&state, task)
            return false
        }
        if over { task.cancel() }
    }

    func finish(_ answer: Bool) {
        let (continuation, tasks): (CheckedContinuation<Bool, Never>?, [Task<Void, Never>]) = state.withLock { state in
            guard state.answer == nil else { return (nil, []) }
            state.answer = answer
            defer { state.continuation = nil }
            return (state.continuation, [state.work, state.timer].compactMap { $0 })
        }
        for task in tasks { task.cancel() }
        continuation?.resume(returning: answer)
    }
}
