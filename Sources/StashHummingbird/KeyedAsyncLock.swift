#if Hummingbird
import Stash

/// Runs async work one at a time per key, in the order it arrives; different keys never wait for
/// each other. What makes ``StashPersistDriver``'s read-then-write `set` atomic in the process.
final class KeyedAsyncLock: Sendable {
    private struct State {
        /// For each key held: the continuations of the callers waiting for it, oldest first.
        var waiters: [String: [CheckedContinuation<Void, Never>]] = [:]
    }

    private let state = LockedValue(State())

    /// Runs `body` holding `key`. Not reentrant: `body` must not take `key` again.
    func withLock<Result: Sendable>(_ key: String, _ body: () async throws -> Result) async throws -> Result {
        await acquire(key)
        defer { release(key) }
        return try await body()
    }

    private func acquire(_ key: String) async {
        let held = state.withLock { state -> Bool in
            if state.waiters[key] == nil {
                state.waiters[key] = []
                return false
            }
            return true
        }
        guard held else { return }
        await withCheckedContinuation { continuation in
            let handedOver = state.withLock { state -> Bool in
                // Released between the two locks: take it now.
                guard state.waiters[key] != nil else {
                    state.waiters[key] = []
                    return true
                }
                state.waiters[key]!.append(continuation)
                return false
            }
            if handedOver { continuation.resume() }
        }
    }

    private func release(_ key: String) {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard var queue = state.waiters[key], !queue.isEmpty else {
                state.waiters[key] = nil
                return nil
            }
            let first = queue.removeFirst()
            state.waiters[key] = queue
            return first
        }
        next?.resume()
    }
}
#endif  // Hummingbird
