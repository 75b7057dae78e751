extension MemoryCache {
    // MARK: - Get or load

    /// The options of get-or-load calls that pass none: the configuration's
    /// ``Configuration/loadOptions``, fixed when the cache is created.
    ///
    /// A call's `options` replace them as a whole; copy them to change one
    /// property for a call (see ``LoadOptions``).
    ///
    /// - Complexity: O(1). Thread-safe; does not block.
    public var loadOptions: LoadOptions { core.loadOptions }

    /// The value for `key`, loading it with `loader` on a miss: one load per
    /// key at a time, shared by every caller that asks meanwhile.
    ///
    /// ```swift
    /// let users = MemoryCache<UUID, User>(configuration: .init(
    ///     countLimit: 10_000,
    ///     loadOptions: LoadOptions(ttl: .seconds(60), refreshAfter: .seconds(45), staleIfError: .seconds(300))))
    /// let user = try await users.value(forKey: id) { id in try await database.user(id) }
    /// ```
    ///
    /// - A fresh hit returns at once, never suspending; when the entry is older
    ///   than ``LoadOptions/refreshAfter`` it also starts one background reload.
    /// - A miss calls `loader` in a task of its own, outside every lock, unless
    ///   a load of `key` is under way: then this call waits for that one and
    ///   shares its value or its error. The loaded value is stored with
    ///   ``LoadOptions/ttl`` and ``Configuration/loadedValueCost``, unless `key`
    ///   was written, removed or invalidated while it loaded (the newer state
    ///   wins; this call still returns what it loaded).
    /// - When the load throws or outlasts the timeouts, an expired value kept for
    ///   ``LoadOptions/staleIfError`` is returned instead (counted in
    ///   ``CacheStatistics/staleValuesServed``). A loader's error is also counted
    ///   in ``CacheStatistics/loadFailures`` and logged once per incident; a
    ///   timeout is not a failure of the load, which goes on and is counted
    ///   when it ends.
    /// - Cancelling this call's task ends this call with `CancellationError`;
    ///   the load is cancelled only when every caller waiting for it was.
    /// - `loader` is taken as an autoclosure: the closure literal (or any
    ///   expression giving a loader function) is evaluated only when this call
    ///   loads or refreshes, never on a fresh hit. A hit therefore neither
    ///   retains what the closure captures nor allocates its context.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - options: Replaces ``Configuration/loadOptions`` for this call, as a whole.
    ///     Defaults to `nil`: the cache's options.
    ///   - loader: Loads the value of a key; called at most once at a time per
    ///     key. Evaluated only on a miss or a refresh.
    /// - Returns: The cached, loaded or (on failure) stale value.
    /// - Throws: The loader's error, or a cached one (``LoadOptions/errorTTL``);
    ///   ``StashError/Code/timedOut`` after ``LoadOptions/hardTimeout``;
    ///   ``StashError/Code/recursiveLoad`` when `loader` asks for its own key;
    ///   `CancellationError`.
    /// - Complexity: A hit is O(1) and costs about what ``value(forKey:)`` costs.
    ///   Thread-safe; never blocks a thread for a load.
    // Always inlined: called out of line, an async function costs a task-frame
    // allocation and an executor check (`swift_task_switch`), several times the hit itself
    // (docs/benchmarks.md, "Get-or-load").
    @inlinable @inline(__always)
    public func value(
        forKey key: Key,
        options: LoadOptions? = nil,
        orLoad loader: @autoclosure () -> @Sendable (Key) async throws -> Value
    ) async throws -> Value {
        let found = core.loadLookup(forKey: key, refreshAfter: LoadOptions.refreshAge(of: options, cacheDefault: core.defaultRefreshAfter))
        if case .fresh(let value, isDue: false) = found { return value }
        return try await core.resolveLoad(key, found: found, options: options ?? core.loadOptions, loader: loader())
    }

    /// The blocking form of `value(forKey:options:orLoad:)`, for synchronous
    /// code: the first thread to miss runs `loader` itself, and other threads
    /// asking for the key meanwhile block until it ends and share its value or
    /// its error.
    ///
    /// Refresh ahead, the fail-safe, cached errors, the ordering rule and the
    /// counters work as in the async form; a refresh runs on a background
    /// dispatch queue. Timeouts do not apply: a synchronous loader cannot be
    /// left behind. Blocking and async get-or-load calls coordinate separately:
    /// one of each may load a key at the same moment (the later load's value
    /// is stored).
    ///
    /// Its name differs from the async form's so that a loader closure that
    /// happens not to `await` never picks it by accident. Do not call it from
    /// async code (the compiler warns): it blocks its thread for the whole load.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - options: Replaces ``Configuration/loadOptions`` for this call, as a whole. Defaults to `nil`.
    ///   - loader: Loads the value of a key; called at most once at a time per key
    ///     by blocking calls. Evaluated only on a miss or a refresh, as in the async form.
    /// - Returns: The cached, loaded or (on failure) stale value.
    /// - Throws: The loader's error, or a cached one; ``StashError/Code/recursiveLoad``
    ///   when `loader` asks for its own key on its own thread.
    /// - Complexity: A hit is O(1). Thread-safe; blocks the calling thread for a load.
    @available(*, noasync, message: "blocks its thread for the whole load; use value(forKey:options:orLoad:) with await")
    public func blockingValue(
        forKey key: Key,
        options: LoadOptions? = nil,
        orLoad loader: @autoclosure () -> @Sendable (Key) throws -> Value
    ) throws -> Value {
        let found = core.loadLookup(forKey: key, refreshAfter: LoadOptions.refreshAge(of: options, cacheDefault: core.defaultRefreshAfter))
        if case .fresh(let value, isDue: false) = found { return value }
        let options = options ?? core.loadOptions
        let core = core
        return try core.loading.resolveBlocking(
            key, found: found, options: options,
            fresh: { core.freshValue(forKey: key) },
            store: { value, ticket in _ = core.storeLoadedNow(value, forKey: key, ticket: ticket, options: options) },
            begin: { core.beginLoad(forKey: key) },
            end: { ticket in core.endLoad(forKey: key, ticket: ticket) },
            loader: loader())
    }

    /// The values of `keys`, loading every missing one with one call of
    /// `loader`, which receives only the keys that are neither cached nor
    /// being loaded already (those are waited for).
    ///
    /// Each key behaves as in `value(forKey:options:orLoad:)`. A key that
    /// `loader` leaves out of its result has no value and is left out of the
    /// returned dictionary; so is a key whose load failed with no stale value.
    ///
    /// - Parameters:
    ///   - keys: The keys; duplicates are looked up once.
    ///   - options: Replaces ``Configuration/loadOptions`` for this call, as a whole.
    ///     Defaults to `nil`. Timeouts do not apply to bulk calls.
    ///   - loader: Loads the keys it is given, returning the values it found.
    /// - Returns: The value of each key that has one.
    /// - Throws: The loader's error (or a cached one) when no key has a value to
    ///   return and some load failed: a partial answer is returned, an empty one
    ///   that hides a failure is not. ``StashError/Code/recursiveLoad``;
    ///   `CancellationError`.
    /// - Complexity: O(n) lookups, each O(1). Thread-safe; never blocks a thread for a load.
    public func values(
        forKeys keys: some Sequence<Key>,
        options: LoadOptions? = nil,
        orLoad loader: @escaping @Sendable (Set<Key>) async throws -> [Key: Value]
    ) async throws -> [Key: Value] {
        let options = options ?? core.loadOptions
        let refreshAfter = options.refreshAfter?.nanosecondsClamped ?? .max
        return try await core.loading.values(
            forKeys: keys, options: options, target: core,
            lookUp: { [core] keys in keys.map { core.loadLookup(forKey: $0, refreshAfter: refreshAfter) } }, loader: loader)
    }

    /// Reloads `key` now, whatever the age of its value, and returns the new
    /// value; joins a load of `key` under way instead of starting another.
    ///
    /// Other callers keep getting the current value until the new one is
    /// stored. A cached error is ignored. On failure the current value stays.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - options: Replaces ``Configuration/loadOptions`` for this call, as a whole. Defaults to `nil`.
    ///   - loader: Loads the value.
    /// - Returns: The loaded value.
    /// - Throws: The loader's error; ``StashError/Code/timedOut`` after
    ///   ``LoadOptions/hardTimeout``; `CancellationError`.
    /// - Complexity: O(1) besides the load. Thread-safe; never blocks a thread.
    @discardableResult
    public func refreshValue(
        forKey key: Key,
        options: LoadOptions? = nil,
        using loader: @escaping @Sendable (Key) async throws -> Value
    ) async throws -> Value {
        core.loading.forgetError(forKey: key)
        return try await core.loading.load(
            key, stale: nil, options: options ?? core.loadOptions, reloads: true, target: core,
            loader: LoadedValue.fromLoader(loader))
    }

    /// Makes `key`'s value expire now: lookups miss it and the next
    /// get-or-load loads it again, but it stays available as that load's
    /// fail-safe until its ``LoadOptions/staleIfError`` grace ends (a value
    /// with none is removed). A load of `key` under way does not store what
    /// it loads; a cached error for `key` is forgotten.
    ///
    /// ``onEvict`` is told only when the value is removed, with reason
    /// ``EvictionReason/removed``.
    ///
    /// - Parameter key: The key.
    /// - Returns: Whether there was a fresh value.
    /// - Complexity: O(1). Thread-safe; blocks only while another thread holds the lock.
    @discardableResult
    public func invalidateValue(forKey key: Key) -> Bool {
        core.invalidate(key)
    }
}
