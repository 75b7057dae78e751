import Logging

/// The get-or-load engine shared by ``MemoryCache`` and ``Cache``: given what
/// a lookup found, it serves the value, refreshes it in the background,
/// loads it once per key, falls back to a stale value, caches errors, and
/// keeps the load counters.
///
/// The caches look the key up themselves (a hit never reaches this type),
/// then hand a miss, a stale value or a hit due for refresh to ``resolve``.
/// Every load runs in a task of ``LoadCoordinator``, outside every lock.
///
/// Thread-safe: its state sits behind one lock, taken briefly on the miss,
/// refresh and load paths only.
final class LoadingEngine<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    typealias Loader = @Sendable (Key) async throws -> Value
    /// A loader that says how it got its value (see ``LoadedValue/fromLoader(_:)``).
    typealias SourcedLoader = @Sendable (Key) async throws -> LoadedValue<Value>
    typealias BulkLoader = @Sendable (Set<Key>) async throws -> [Key: Value]

    private struct CachedError {
        let error: any Error
        let until: Int64
    }

    private struct State {
        var cachedErrors: [Key: CachedError] = [:]
        var successes = 0
        var failures = 0
        var fleetReads = 0
        var refreshes = 0
        var staleServed = 0
        var loadTimes = LoadTimeDistribution()
    }

    let coordinator: LoadCoordinator<Key, Value>
    /// The loads of the blocking get-or-load, by key.
    let blockingFlights = LockedValue<[Key: BlockingFlight<Value>]>([:])
    let clock: any CacheClock
    private let state = LockedValue(State())
    private let logger: Logger
    /// Load failures: the first of an incident is logged as a warning, the rest at debug
    /// level, and the next success ends it.
    private let incidents: IncidentLog
    /// Cached errors kept at most, so that a flood of failing keys cannot grow
    /// the error table without bound.
    private let errorCapacity: Int

    /// Where refresh-ahead reloads are counted, for the owner's shutdown to wait for; `nil` for an
    /// owner that does not wait (a `MemoryCache`, whose `close()` is synchronous).
    private let background: BackgroundTasks?

    init(clock: any CacheClock, logger: Logger, errorCapacity: Int = 10_000, background: BackgroundTasks? = nil) {
        self.clock = clock
        self.logger = logger
        self.background = background
        incidents = IncidentLog(logger: logger, clock: clock)
        self.errorCapacity = errorCapacity
        coordinator = LoadCoordinator(clock: clock)
    }

    // MARK: - Get or load

    /// The value for `key` given what the cache's lookup found: a hit's value
    /// (refreshing it in the background when due), or the result of a load.
    func resolve(
        _ key: Key, found: LoadLookup<Value>, options: LoadOptions,
        target: some LoadingTarget<Key, Value>, loader: @escaping SourcedLoader
    ) async throws -> Value {
        switch found {
        case .fresh(let value, let isDue):
            if isDue { refresh(key, options: options, target: target, loader: loader) }
            return value
        case .stale(let value):
            return try await load(key, stale: value, options: options, target: target, loader: loader)
        case .miss:
            return try await load(key, stale: nil, options: options, target: target, loader: loader)
        }
    }

    /// Loads `key` (or waits for its load under way), falling back to `stale`
    /// when the load fails or takes longer than the caller waits.
    ///
    /// - Parameter reloads: Whether to load even if the cache holds a fresh
    ///   value when the load starts (for an explicit refresh). Otherwise a
    ///   load first looks again, so that a caller whose lookup missed just
    ///   before another load stored the key gets that value, not a second load.
    func load(
        _ key: Key, stale: Value?, options: LoadOptions, reloads: Bool = false,
        target: some LoadingTarget<Key, Value>, loader: @escaping SourcedLoader
    ) async throws -> Value {
        if let error = cachedError(forKey: key) {
            return try staleOr(stale, error)
        }
        let timeout = stale == nil ? options.hardTimeout : Self.earlier(options.softTimeout, options.hardTimeout)
        do {
            // The load closure is made only by the caller that starts the load:
            // the others, most of a stampede, join without allocating one.
            return try await coordinator.value(forKey: key, timeout: timeout) {
                { [self] in
                    if !reloads, let value = target.freshValue(forKey: key) { return value }
                    return try await runLoad(key, options: options, target: target) { try await loader(key) }
                }
            }
        } catch let error where Self.allowsStale(error) {
            return try staleOr(stale, error)
        }
    }

    /// Starts a background reload of `key` unless one is under way.
    func refresh(
        _ key: Key, options: LoadOptions, target: some LoadingTarget<Key, Value>, loader: @escaping SourcedLoader
    ) {
        background?.begin()
        let started = coordinator.startIfIdle(key) { [self] in
            defer { background?.end() }
            return try await runLoad(key, options: options, target: target) { try await loader(key) }
        }
        if started { addRefresh() } else { background?.end() }
    }

    /// Reports a loaded value that could not be stored (the callers still get it).
    func logStoreFailure(_ error: any Error) {
        logger.warning("a loaded value could not be stored: \(error)")
    }

    /// Counts a background reload started.
    func addRefresh() {
        state.withLock { $0.refreshes += 1 }
    }

    /// The bulk get-or-load: looks the keys up with `lookUp` (given each key once, in order; it
    /// answers one lookup per key, in the same order), refreshes hits that are due, and loads the
    /// rest with ``loadAll(_:stale:options:target:loader:)``.
    func values(
        forKeys keys: some Sequence<Key>, options: LoadOptions, target: some LoadingTarget<Key, Value>,
        lookUp: ([Key]) async throws -> [LoadLookup<Value>], loader: @escaping BulkLoader
    ) async throws -> [Key: Value] {
        var result: [Key: Value] = [:]
        var stale: [Key: Value] = [:]
        var missing: [Key] = []
        var seen = Set<Key>()
        let unique = keys.filter { seen.insert($0).inserted }
        let lookups = try await lookUp(unique)
        precondition(lookups.count == unique.count, "a bulk lookup answers one lookup per key")
        for (key, found) in zip(unique, lookups) {
            switch found {
            case .fresh(let value, let isDue):
                result[key] = value
                if isDue {
                    refresh(key, options: options, target: target) { key in
                        guard let value = try await loader([key])[key] else {
                            throw StashError(.notLoaded, "the loader returned no value for the key")
                        }
                        return LoadedValue(value, source: .loader)
                    }
                }
            case .stale(let value):
                stale[key] = value
                missing.append(key)
            case .miss:
                missing.append(key)
            }
        }
        guard !missing.isEmpty else { return result }
        let (loaded, failure) = try await loadAll(missing, stale: stale, options: options, target: target, loader: loader)
        // A partial answer is an answer; an empty one that hides a failure would read as "no values".
        if result.isEmpty, loaded.isEmpty, let failure { throw failure }
        return result.merging(loaded) { cached, _ in cached }
    }

    /// The values of `keys` that the cache's lookups did not answer: keys
    /// being loaded are waited for, the rest loaded by one call of `loader`,
    /// with `stale` values standing in for keys whose load failed.
    ///
    /// - Returns: The values, and the first error of a key left without one
    ///   (a failed load or a cached error, with no stale value to stand in).
    func loadAll(
        _ keys: [Key], stale: [Key: Value], options: LoadOptions,
        target: some LoadingTarget<Key, Value>, loader: @escaping BulkLoader
    ) async throws -> (values: [Key: Value], failure: (any Error)?) {
        var result: [Key: Value] = [:]
        var failure: (any Error)?
        var toLoad: [Key] = []
        for key in keys {
            if let error = cachedError(forKey: key) {
                if let value = stale[key] {
                    result[key] = value
                    state.withLock { $0.staleServed += 1 }
                } else if failure == nil {
                    failure = error
                }
            } else {
                toLoad.append(key)
            }
        }
        let results = try await coordinator.values(forKeys: toLoad) { [self] batch in
            try await runBulkLoad(batch, options: options, target: target, loader: loader)
        }
        for (key, outcome) in results {
            switch outcome {
            case .success(let value):
                result[key] = value
            case .failure(let error):
                if error is CancellationError { throw error }
                if let value = stale[key], Self.allowsStale(error) {
                    result[key] = value
                    state.withLock { $0.staleServed += 1 }
                } else if failure == nil, (error as? StashError)?.code != .notLoaded {
                    failure = error
                }
            }
        }
        return (result, failure)
    }

    /// Forgets `key`'s cached error, for an invalidation.
    func forgetError(forKey key: Key) {
        state.withLock { _ = $0.cachedErrors.removeValue(forKey: key) }
    }

    /// Forgets every cached error, for a `removeAll()`.
    func forgetErrors() {
        state.withLock { $0.cachedErrors.removeAll() }
    }

    /// Adds the load counters to a tier's statistics.
    func addCounters(to statistics: inout CacheStatistics) {
        state.withLock { state in
            statistics.loadSuccesses = state.successes
            statistics.loadFailures = state.failures
            statistics.fleetReads = state.fleetReads
            statistics.refreshes = state.refreshes
            statistics.staleValuesServed = state.staleServed
            statistics.loadTimes = state.loadTimes
        }
    }

    // MARK: - Running loads

    /// One load, run once per flight: takes a ticket, calls the loader, stores
    /// its value if the ticket holds, counts (a value another instance loaded
    /// as a fleet read) and logs.
    private func runLoad(
        _ key: Key, options: LoadOptions, target: some LoadingTarget<Key, Value>,
        load: () async throws -> LoadedValue<Value>
    ) async throws -> Value {
        let ticket = target.beginLoad(forKey: key)
        let start = clock.nanosecondsNow
        do {
            let loaded = try await load()
            if case .fleet = loaded.source {
                state.withLock { $0.fleetReads += 1 }
            } else {
                recordSuccess(since: start)
            }
            _ = await target.storeLoaded(loaded, forKey: key, ticket: ticket, options: options)
            return loaded.value
        } catch {
            target.endLoad(forKey: key, ticket: ticket)
            recordFailure(error, keys: [key], options: options, since: start)
            throw error
        }
    }

    /// One bulk load of `keys`: as ``runLoad`` for each key the loader returned.
    private func runBulkLoad(
        _ keys: [Key], options: LoadOptions, target: some LoadingTarget<Key, Value>, loader: BulkLoader
    ) async throws -> [Key: Value] {
        let tickets = keys.map { target.beginLoad(forKey: $0) }
        let start = clock.nanosecondsNow
        do {
            let values = try await loader(Set(keys))
            recordSuccess(since: start)
            var loaded: [(key: Key, value: Value, ticket: UInt64)] = []
            loaded.reserveCapacity(values.count)
            for (key, ticket) in zip(keys, tickets) {
                if let value = values[key] {
                    loaded.append((key, value, ticket))
                } else {
                    target.endLoad(forKey: key, ticket: ticket)
                }
            }
            await target.storeBulkLoaded(loaded, options: options)
            return values
        } catch {
            for (key, ticket) in zip(keys, tickets) { target.endLoad(forKey: key, ticket: ticket) }
            recordFailure(error, keys: keys, options: options, since: start)
            throw error
        }
    }

    // MARK: - Counting, logging and cached errors

    func recordSuccess(since start: Int64) {
        let elapsed = Duration.nanoseconds(clock.nanosecondsNow &- start)
        state.withLock { state in
            state.successes += 1
            state.loadTimes.record(elapsed)
        }
        incidents.recordSuccess { failures in "loads recovered after \(failures) failed load(s)" }
    }

    /// Counts a failed load, caches its error when `options` say so, and logs
    /// the first failure of an incident as a warning (the rest at debug level).
    func recordFailure(_ error: any Error, keys: [Key], options: LoadOptions, since start: Int64) {
        guard !(error is CancellationError) else { return }
        let now = clock.nanosecondsNow
        let errorTTL = options.errorTTL?.nanosecondsClamped ?? 0
        state.withLock { state in
            state.failures += 1
            state.loadTimes.record(.nanoseconds(now &- start))
            if errorTTL > 0 {
                if state.cachedErrors.count + keys.count > errorCapacity {
                    state.cachedErrors = state.cachedErrors.filter { $0.value.until > now }
                }
                if state.cachedErrors.count + keys.count <= errorCapacity {
                    for key in keys {
                        state.cachedErrors[key] = CachedError(error: error, until: now.addingClamped(errorTTL))
                    }
                }
            }
        }
        if !incidents.recordFailure(
            "a load failed; later failures until one succeeds are logged at debug level: \(error)")
        {
            logger.debug("a load failed: \(error)")
        }
    }

    /// `key`'s cached error, unless it expired (then it is forgotten).
    /// Reads the clock only when there is one: every caller of a stampede
    /// passes here.
    func cachedError(forKey key: Key) -> (any Error)? {
        guard let cached = state.withLock({ $0.cachedErrors[key] }) else { return nil }
        if cached.until > clock.nanosecondsNow { return cached.error }
        state.withLock { state in
            if state.cachedErrors[key]?.until == cached.until { state.cachedErrors.removeValue(forKey: key) }
        }
        return nil
    }

    /// `stale`, counted as served, or `error` thrown when there is none.
    func staleOr(_ stale: Value?, _ error: any Error) throws -> Value {
        guard let stale else { throw error }
        state.withLock { $0.staleServed += 1 }
        return stale
    }

    /// Whether a stale value may answer `error`: a loader's failure or a
    /// timeout may; a caller's cancellation, a recursive load, or a bulk
    /// loader's answer that the key has no value may not.
    static func allowsStale(_ error: any Error) -> Bool {
        if error is CancellationError { return false }
        if let error = error as? StashError, error.code == .recursiveLoad || error.code == .notLoaded { return false }
        return true
    }

    private static func earlier(_ a: Duration?, _ b: Duration?) -> Duration? {
        switch (a, b) {
        case let (a?, b?): min(a, b)
        case let (a?, nil): a
        case let (nil, b): b
        }
    }
}
