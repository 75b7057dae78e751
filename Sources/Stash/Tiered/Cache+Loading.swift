extension Cache {
    // MARK: - Get or load

    /// The value for `key` from memory, then disk, else loaded with `loader`:
    /// one load per key at a time, shared by every caller that asks meanwhile,
    /// and written to both tiers.
    ///
    /// ```swift
    /// let profiles = try Cache<Profile>(
    ///     memory: MemoryCache(countLimit: 10_000), disk: DiskCache(directory: path, codec: .json),
    ///     loadOptions: LoadOptions(ttl: .seconds(300), refreshAfter: .seconds(240), staleIfError: .seconds(3_600)))
    /// let profile = try await profiles.value(forKey: "user/42") { _ in try await api.profile(42) }
    /// ```
    ///
    /// Behaves as `MemoryCache`'s `value(forKey:options:orLoad:)`, with these
    /// differences:
    /// - A memory miss reads disk (on the disk tier's queue, never on Swift's
    ///   cooperative pool) and promotes a disk hit before loading.
    /// - A refresh ahead is decided on the memory tier's copy, whose age
    ///   counts from its write or its promotion from disk.
    /// - The fail-safe copy of an expired value (``LoadOptions/staleIfError``)
    ///   is kept in the memory tier only: the disk copy expires with its time to
    ///   live, so a restart or a memory eviction loses the fail-safe.
    /// - A loaded value is written to disk first, then memory, as
    ///   `setValue(_:forKey:ttl:)` does; if the disk write fails, the value
    ///   is still returned, memory is left without it, and the failure is logged.
    /// - With a remote tier, a local miss reads the remote tier (a hit is
    ///   promoted, as `value(forKey:)` does) before loading, and a loaded value
    ///   is sent to the remote tier too, in the background.
    /// - With a remote tier and ``LoadOptions/fleetLockTTL``, a key missing
    ///   from every tier (or only stale) is loaded by one instance of the
    ///   fleet: this one, if it takes the fleet lock (it then waits for the
    ///   remote write before returning), else it waits for the value the holder
    ///   writes to the remote tier, polling with backoff; if the remote tier
    ///   fails, or the lock outlives its time to live, it loads locally. A
    ///   refresh ahead (``LoadOptions/refreshAfter``) takes no fleet lock. A value
    ///   read from the remote tier this way counts in ``CacheStatistics/fleetReads``
    ///   of ``Cache/statistics``, not as a load.
    ///   See the StashRedis article "Sharing a cache across servers".
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - options: Replaces ``loadOptions`` for this call, as a whole. Defaults to `nil`.
    ///   - loader: Loads the value of a key; called at most once at a time per
    ///     key. An autoclosure, as in `MemoryCache`'s form: evaluated only when
    ///     the memory tier misses, so a memory hit costs nothing for it.
    /// - Returns: The cached, loaded or (on failure) stale value.
    /// - Throws: The loader's error or a cached one; ``StashError`` when the disk
    ///   read fails; ``StashError/Code/timedOut``; ``StashError/Code/recursiveLoad``;
    ///   `CancellationError`.
    /// - Complexity: A memory hit is O(1) and suspends nowhere. Thread-safe;
    ///   never blocks a thread of the cooperative pool.
    // Always inlined, so that a memory hit is specialised for the caller's
    // `Value` and makes no async call (see `MemoryCache.value(forKey:options:orLoad:)`).
    @inlinable @inline(__always)
    public func value(
        forKey key: String,
        options: LoadOptions? = nil,
        orLoad loader: @autoclosure () -> @Sendable (String) async throws -> Value
    ) async throws -> Value {
        let refreshAfter = LoadOptions.refreshAge(of: options, cacheDefault: defaultRefreshAfter)
        // Through `MemoryCache`, not `memory?.core`: reaching the core through the optional
        // retained it around the lookup (a reference-count operation on every hit).
        let found = memory?.loadLookup(forKey: key, refreshAfter: refreshAfter) ?? .miss
        if case .fresh(let value, isDue: false) = found { return value }
        return try await core.resolveAfterMemory(key, memoryFound: found, options: options ?? loadOptions, loader: loader())
    }

    /// The values of `keys` from memory, then disk, loading every missing one
    /// with one call of `loader`, which receives only the keys that are neither
    /// cached nor being loaded already (those are waited for).
    ///
    /// Each key behaves as in ``value(forKey:options:orLoad:)``; a key that
    /// `loader` leaves out, or whose load failed with no stale value, is left
    /// out of the result.
    ///
    /// - Parameters:
    ///   - keys: The keys; duplicates are looked up once.
    ///   - options: Replaces ``loadOptions`` for this call, as a whole. Defaults to `nil`. Timeouts do not apply.
    ///   - loader: Loads the keys it is given, returning the values it found.
    /// - Returns: The value of each key that has one.
    /// - Throws: The loader's error (or a cached one) when no key has a value to
    ///   return and some load failed: a partial answer is returned, an empty one
    ///   that hides a failure is not. ``StashError`` when a disk read fails;
    ///   ``StashError/Code/recursiveLoad``; `CancellationError`.
    /// - Complexity: O(n) lookups. Thread-safe; never blocks a thread of the cooperative pool.
    public func values(
        forKeys keys: some Sequence<String>,
        options: LoadOptions? = nil,
        orLoad loader: @escaping @Sendable (Set<String>) async throws -> [String: Value]
    ) async throws -> [String: Value] {
        try await core.values(forKeys: keys, options: options ?? loadOptions, orLoad: loader)
    }

    /// Reloads `key` now and writes the new value to both tiers; joins a load
    /// of `key` under way instead of starting another. Others keep reading
    /// the current value until then; a cached error is ignored.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - options: Replaces ``loadOptions`` for this call, as a whole. Defaults to `nil`.
    ///   - loader: Loads the value.
    /// - Returns: The loaded value.
    /// - Throws: The loader's error; ``StashError/Code/timedOut``; `CancellationError`.
    /// - Complexity: O(1) besides the load and the writes. Thread-safe; the load
    ///   runs in a task of its own and the disk write on the disk tier's queue,
    ///   so no thread of the cooperative pool blocks.
    @discardableResult
    public func refreshValue(
        forKey key: String,
        options: LoadOptions? = nil,
        using loader: @escaping @Sendable (String) async throws -> Value
    ) async throws -> Value {
        try await core.refreshValue(forKey: key, options: options ?? loadOptions, using: loader)
    }

    /// Makes `key`'s value expire now: the memory copy is kept as a fail-safe
    /// for its ``LoadOptions/staleIfError`` grace, the disk copy is removed, a
    /// load of `key` under way does not store what it loads, and a cached
    /// error for `key` is forgotten.
    ///
    /// - Parameter key: The key.
    /// - Returns: Whether either tier held a fresh value.
    /// - Throws: ``StashError`` when the disk removal fails.
    /// - Complexity: O(1) plus one disk removal. Thread-safe; blocks on disk I/O.
    @discardableResult
    public func invalidateValue(forKey key: String) throws(StashError) -> Bool {
        try core.invalidateValue(forKey: key)
    }

    /// As the synchronous `invalidateValue(forKey:)`, with the disk work on the disk tier's
    /// queue, never on Swift's cooperative pool.
    ///
    /// - Parameter key: The key.
    /// - Returns: Whether either tier held a fresh value.
    /// - Throws: ``StashError`` when the disk removal fails.
    /// - Complexity: O(1) plus one disk removal. Thread-safe; suspends for the
    ///   disk work instead of blocking.
    @discardableResult
    public func invalidateValue(forKey key: String) async throws(StashError) -> Bool {
        try await core.invalidateValue(forKey: key)
    }
}
