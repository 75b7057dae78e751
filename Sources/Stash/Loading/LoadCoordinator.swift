/// Runs at most one load per key at a time: callers that ask for a key whose
/// load is under way wait for that load and share its result or its error.
///
/// The engine under the caches' get-or-load API. A load runs in a task of its
/// own, outside every lock, so that:
/// - a waiter that is cancelled, or whose timeout passes, leaves at once
///   without disturbing the others;
/// - the load is cancelled only when every waiter was cancelled; a load whose
///   waiters merely timed out goes on, and whatever it stores is kept;
/// - a loader that asks for another key of the same coordinator runs that load
///   normally, while one that asks for its own key (directly or through other
///   loads) gets ``StashError/Code/recursiveLoad`` instead of waiting for
///   itself forever. Loads are tracked through a task-local value, so a loader
///   that hops to a detached task escapes that check.
///
/// Thread-safe. Every method takes one lock briefly and never blocks for a load.
final class LoadCoordinator<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// How a bulk caller is answered for one of its keys.
    typealias Answer = @Sendable (Result<Value, any Error>) -> Void

    /// One caller waiting for one key's load. A class, so that the caller's
    /// cancellation handler finds it by identity: no waiter ID to take under
    /// the lock before joining.
    private final class Waiter: @unchecked Sendable {
        // @unchecked Sendable: `continuation` and `timer` are written only
        // under the coordinator's lock while the waiter is in a flight; they
        // are read by whoever removed the waiter from its flight under that
        // lock, after which nobody writes them.
        /// A single-key caller's continuation, set when it joins the flight.
        var continuation: UnsafeContinuation<Value, any Error>?
        /// A bulk caller's collector for this key.
        let bulkAnswer: Answer?
        /// Answers the waiter with a timeout error; cancelled when it is answered otherwise.
        var timer: Task<Void, Never>?

        init(bulkAnswer: Answer? = nil) {
            self.bulkAnswer = bulkAnswer
        }

        /// Answers the caller once; call only after removing the waiter from its flight.
        func answer(_ result: Result<Value, any Error>) {
            timer?.cancel()
            if let continuation {
                continuation.resume(with: result)
            } else {
                bulkAnswer?(result)
            }
        }
    }

    private struct Flight {
        let id: UInt64
        /// In joining order; a leaving waiter is found by identity.
        var waiters: [Waiter] = []
        var task: Task<Void, Never>?

        /// Removes `waiter`; `nil` if it is not in this flight.
        mutating func remove(_ waiter: Waiter) -> Waiter? {
            guard let index = waiters.lastIndex(where: { $0 === waiter }) else { return nil }
            return waiters.remove(at: index)
        }
    }

    private enum JoinAction { case fail, start(UInt64), join }

    private struct State {
        var flights: [Key: Flight] = [:]
        var nextID: UInt64 = 0

        mutating func makeID() -> UInt64 {
            nextID += 1
            return nextID
        }
    }

    private let state = LockedValue(State())
    private let clock: any CacheClock

    /// Creates a coordinator whose timeouts are measured on `clock`.
    init(clock: any CacheClock) {
        self.clock = clock
    }

    /// The value loaded for `key`, by the load under way or by a new one
    /// running `load`.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - timeout: How long this caller waits; `nil` waits for the load to end.
    ///     When it passes, this caller gets ``StashError/Code/timedOut`` while the
    ///     load goes on.
    ///   - load: Loads the value, and stores it where it belongs. Runs in a task
    ///     of its own, only if no load of `key` is under way.
    /// - Throws: The load's error; ``StashError/Code/recursiveLoad`` from inside
    ///   the load of `key` itself; ``StashError/Code/timedOut``;
    ///   `CancellationError` when this caller's task is cancelled.
    func value(
        forKey key: Key,
        timeout: Duration? = nil,
        load: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        try await value(forKey: key, timeout: timeout, makeLoad: { load })
    }

    /// The value loaded for `key`, as ``value(forKey:timeout:load:)``, with
    /// the load made by `makeLoad` only when this caller starts one: a caller
    /// that joins a load under way allocates no closure for a load it never runs.
    func value(
        forKey key: Key,
        timeout: Duration? = nil,
        makeLoad: () -> @Sendable () async throws -> Value
    ) async throws -> Value {
        let token = LoadToken(coordinator: ObjectIdentifier(self), key: key)
        if LoadScope.active.contains(token) {
            throw StashError(.recursiveLoad, "the loader of a key asked the cache for that same key")
        }
        let deadline = timeout.map { clock.nanosecondsNow.addingClamped($0.nanosecondsClamped) }
        let waiter = Waiter()
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Value, any Error>) in
                // Checked under the lock: a cancellation after the check runs the
                // handler below, which takes the lock too and so finds this waiter.
                let action = state.withLock { state -> JoinAction in
                    if Task.isCancelled { return .fail }
                    waiter.continuation = continuation
                    if state.flights[key] != nil {
                        state.flights[key]!.waiters.append(waiter)
                        return .join
                    }
                    let id = state.makeID()
                    state.flights[key] = Flight(id: id, waiters: [waiter])
                    return .start(id)
                }
                switch action {
                case .fail:
                    continuation.resume(throwing: CancellationError())
                    return
                case .start(let id):
                    let load = makeLoad()
                    start([key: id], tokens: [token]) { [key: try await load()] }
                case .join:
                    break
                }
                if let deadline {
                    armTimer(key, waiter: waiter, deadline: deadline)
                }
            }
        } onCancel: {
            leave(key, waiter: waiter, with: CancellationError(), cancelsLoadIfLast: true)
        }
    }

    /// The values of `keys`: each key whose load is under way is waited for,
    /// and every other key is loaded by one call of `load`.
    ///
    /// - Parameters:
    ///   - keys: The keys, without duplicates.
    ///   - load: Loads the keys it is given; a key missing from its result has
    ///     no value. Runs in a task of its own, only for keys not being loaded.
    /// - Returns: Each key's result: its value, the error of the load that had
    ///   it, or ``StashError/Code/notLoaded`` when its loader returned none.
    /// - Throws: ``StashError/Code/recursiveLoad`` when a key is loaded by the
    ///   calling loader itself; `CancellationError` when the caller is cancelled.
    func values(
        forKeys keys: [Key],
        load: @escaping @Sendable ([Key]) async throws -> [Key: Value]
    ) async throws -> [Key: Result<Value, any Error>] {
        guard !keys.isEmpty else { return [:] }
        let tokens = keys.map { LoadToken(coordinator: ObjectIdentifier(self), key: $0) }
        if !LoadScope.active.isDisjoint(with: tokens) {
            throw StashError(.recursiveLoad, "the loader of a key asked the cache for that same key")
        }
        let collector = BulkCollector<Key, Value>(expected: keys.count)
        let waiters = keys.map { key in Waiter(bulkAnswer: { collector.receive($0, forKey: key) }) }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<[Key: Result<Value, any Error>], any Error>) in
                collector.attach(continuation)
                let started = state.withLock { state -> [Key: UInt64]? in
                    if Task.isCancelled { return nil }
                    var started: [Key: UInt64] = [:]
                    for (key, waiter) in zip(keys, waiters) {
                        if state.flights[key] != nil {
                            state.flights[key]!.waiters.append(waiter)
                        } else {
                            let id = state.makeID()
                            state.flights[key] = Flight(id: id, waiters: [waiter])
                            started[key] = id
                        }
                    }
                    return started
                }
                guard let started else {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                if !started.isEmpty {
                    let batch = Array(started.keys)
                    start(started, tokens: batch.map { LoadToken(coordinator: ObjectIdentifier(self), key: $0) }) {
                        try await load(batch)
                    }
                }
            }
        } onCancel: {
            for (key, waiter) in zip(keys, waiters) {
                leave(key, waiter: waiter, with: CancellationError(), cancelsLoadIfLast: true)
            }
        }
    }

    /// Starts a load of `key` in the background unless one is under way, and
    /// returns at once. For refreshing an entry ahead of its expiry.
    ///
    /// - Returns: Whether a load was started.
    @discardableResult
    func startIfIdle(_ key: Key, load: @escaping @Sendable () async throws -> Value) -> Bool {
        let id = state.withLock { state -> UInt64? in
            guard state.flights[key] == nil else { return nil }
            let id = state.makeID()
            state.flights[key] = Flight(id: id)
            return id
        }
        guard let id else { return false }
        start([key: id], tokens: [LoadToken(coordinator: ObjectIdentifier(self), key: key)]) {
            [key: try await load()]
        }
        return true
    }

    /// Whether a load of `key` is under way.
    func isLoading(_ key: Key) -> Bool {
        state.withLock { $0.flights[key] != nil }
    }

    /// The callers waiting for the load of `key`: for tests.
    func waiterCount(forKey key: Key) -> Int {
        state.withLock { $0.flights[key]?.waiters.count ?? 0 }
    }

    // MARK: Private

    /// Runs `load` in a task of its own for the flights `ids`, then answers
    /// each flight's waiters with its key's result.
    private func start(
        _ ids: [Key: UInt64], tokens: [LoadToken], load: @escaping @Sendable () async throws -> [Key: Value]
    ) {
        // Inherits the caller's task-local loads, so that a chain of loaders
        // asking for each other's keys is caught when it comes back to its start.
        let task = Task {
            let result: Result<[Key: Value], any Error>
            do {
                var active = LoadScope.active
                active.formUnion(tokens)
                result = .success(try await LoadScope.$active.withValue(active) { try await load() })
            } catch {
                result = .failure(error)
            }
            for (key, id) in ids {
                finish(key, flight: id, with: result.flatMap { values in
                    values[key].map { .success($0) }
                        ?? .failure(StashError(.notLoaded, "the loader returned no value for the key"))
                })
            }
        }
        let isOrphan = state.withLock { state -> Bool in
            var isOrphan = true
            for (key, id) in ids where state.flights[key]?.id == id {
                state.flights[key]!.task = task
                isOrphan = false
            }
            return isOrphan
        }
        // Every waiter was cancelled before the task was recorded: cancel it now.
        if isOrphan { task.cancel() }
    }

    private func finish(_ key: Key, flight id: UInt64, with result: Result<Value, any Error>) {
        let waiters = state.withLock { state -> [Waiter] in
            guard state.flights[key]?.id == id else { return [] }
            return state.flights.removeValue(forKey: key)!.waiters
        }
        for waiter in waiters {
            waiter.answer(result)
        }
    }

    private func armTimer(_ key: Key, waiter: Waiter, deadline: Int64) {
        let timer = Task { [clock] in
            do {
                try await clock.sleep(until: deadline)
            } catch {
                return  // cancelled: the waiter was answered
            }
            leave(
                key, waiter: waiter, with: StashError(.timedOut, "the load did not finish within its timeout"),
                cancelsLoadIfLast: false)
        }
        let isAnswered = state.withLock { state -> Bool in
            guard state.flights[key]?.waiters.contains(where: { $0 === waiter }) == true else { return true }
            waiter.timer = timer
            return false
        }
        if isAnswered { timer.cancel() }
    }

    /// Answers one waiter with `error` and forgets it; when it was the last and
    /// `cancelsLoadIfLast`, also forgets the flight and cancels its load, so
    /// that the next caller starts afresh. A load shared by several keys (a
    /// bulk load) is cancelled only when none of its keys has a waiter left.
    private func leave(_ key: Key, waiter: Waiter, with error: any Error, cancelsLoadIfLast: Bool) {
        let (waiter, abandoned) = state.withLock { state -> (Waiter?, Task<Void, Never>?) in
            guard let waiter = state.flights[key]?.remove(waiter) else { return (nil, nil) }
            guard cancelsLoadIfLast, state.flights[key]!.waiters.isEmpty else { return (waiter, nil) }
            let task = state.flights.removeValue(forKey: key)!.task
            let isShared = task != nil && state.flights.values.contains { $0.task == task }
            return (waiter, isShared ? nil : task)
        }
        waiter?.answer(.failure(error))
        abandoned?.cancel()
    }
}

/// Gathers a bulk caller's results, one key at a time, and resumes the caller
/// once every key has one.
private final class BulkCollector<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct State {
        var results: [Key: Result<Value, any Error>] = [:]
        var continuation: CheckedContinuation<[Key: Result<Value, any Error>], any Error>?
    }

    private let expected: Int
    private let state: LockedValue<State>

    init(expected: Int) {
        self.expected = expected
        state = LockedValue(State())
    }

    /// Sets the caller's continuation, before any result can arrive.
    func attach(_ continuation: CheckedContinuation<[Key: Result<Value, any Error>], any Error>) {
        state.withLock { $0.continuation = continuation }
    }

    /// Records `key`'s result; the last one resumes the caller. A cancellation
    /// resumes the caller at once with `CancellationError`.
    func receive(_ result: Result<Value, any Error>, forKey key: Key) {
        let resume = state.withLock { state -> (CheckedContinuation<[Key: Result<Value, any Error>], any Error>, Result<[Key: Result<Value, any Error>], any Error>)? in
            guard let continuation = state.continuation else { return nil }
            if case .failure(let error) = result, error is CancellationError {
                state.continuation = nil
                return (continuation, .failure(error))
            }
            state.results[key] = result
            guard state.results.count == expected else { return nil }
            state.continuation = nil
            return (continuation, .success(state.results))
        }
        if let (continuation, result) = resume {
            continuation.resume(with: result)
        }
    }
}

/// A load under way, as the task-local set of ``LoadScope`` records it.
struct LoadToken: Hashable, @unchecked Sendable {
    // @unchecked Sendable: `key` boxes a value whose type is `Sendable` (the
    // initialiser requires it) and immutable; AnyHashable itself is not marked
    // Sendable because it could box anything.
    let coordinator: ObjectIdentifier
    let key: AnyHashable

    init<Key: Hashable & Sendable>(coordinator: ObjectIdentifier, key: Key) {
        self.coordinator = coordinator
        self.key = AnyHashable(key)
    }
}

/// The loads the current task runs inside, outermost first.
enum LoadScope {
    @TaskLocal static var active: Set<LoadToken> = []
}
