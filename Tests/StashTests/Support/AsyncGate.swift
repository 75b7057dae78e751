@testable import Stash

/// A gate that tasks wait at until a test opens it: for holding a loader
/// still while the test arranges callers around it.
final class AsyncGate: Sendable {
    private let state = LockedValue((isOpen: false, waiting: [CheckedContinuation<Void, Never>]()))

    /// Suspends until ``open()``; returns at once once the gate is open.
    func wait() async {
        await withCheckedContinuation { continuation in
            let isOpen = state.withLock { state -> Bool in
                if !state.isOpen { state.waiting.append(continuation) }
                return state.isOpen
            }
            if isOpen { continuation.resume() }
        }
    }

    /// Lets every waiting and later task through.
    func open() {
        let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.isOpen = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    /// How many tasks wait at the gate.
    var waitingCount: Int { state.withLock { $0.waiting.count } }
}

/// A thread-safe counter.
final class Counter: Sendable {
    private let value = LockedValue(0)

    @discardableResult
    func increment() -> Int { value.withLock { $0 += 1; return $0 } }

    var count: Int { value.withLock { $0 } }
}
