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
        return try await resolveAfterMemory(key, memoryFound: found, options: options ?? loadOptions, loader: loader())
    }

    /// `value(forKey:options:orLoad:)` after the memory lookup: reads the
    /// lower tiers, then refreshes or loads.
    @usableFromInline
    func resolveAfterMemory(
        _ key: String, memoryFound: LoadLookup<Value>, options: LoadOptions,
        loader: @escaping @Sendable (String) async throws -> Value
    ) async throws -> Value {
        let found = try await lookBelowMemory(key, memoryFound: memoryFound)
        switch found {
        case .fresh(let value, isDue: false):
            return value
        case .fresh:
            // A refresh ahead reloads on purpose: the shared copy is as old as this one.
            return try await loading.resolve(
                key, found: found, options: options, target: self, loader: LoadedValue.fromLoader(loader))
        case .stale, .miss:
            return try await loading.resolve(
                key, found: found, options: options, target: self, loader: fleetLoader(for: options, loader))
        }
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
        let options = options ?? loadOptions
        let refreshAfter = options.refreshAfter?.nanosecondsClamped ?? .max
        return try await loading.values(
            forKeys: keys, options: options, target: self,
            lookUp: { [self] keys in try await lookUp(keys, refreshAfter: refreshAfter) }, loader: loader)
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
        loading.forgetError(forKey: key)
        return try await loading.load(
            key, stale: nil, options: options ?? loadOptions, reloads: true, target: self,
            loader: LoadedValue.fromLoader(loader))
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
        try invalidateNow(key)
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
        guard let disk else { return try invalidateNow(key) }
        return try await disk.run { [self] () throws(StashError) in try invalidateNow(key) }
    }

    private func invalidateNow(_ key: String) throws(StashError) -> Bool {
        let wasCached = try stripes.withLock(for: key) { () throws(StashError) -> Bool in
            loadTickets.withLock { $0.void(key) }
            let inMemory = memory?.invalidateValue(forKey: key) ?? false
            let onDisk = try disk?.removeValue(forKey: key) ?? false
            return inMemory || onDisk
        }
        loading.forgetError(forKey: key)
        return wasCached
    }

    // MARK: - Lookup

    /// The most keys a bulk lookup reads from the disk tier in one turn of its queue.
    static var bulkDiskChunk: Int { 128 }

    /// For each key, the memory tier's answer if it has a live value, else the disk tier's or the
    /// remote tier's (promoted into the local tiers), else memory's stale value. Memory for each
    /// key; then, for those memory did not answer fresh, the disk tier in one turn of its queue, and the remote tier in one batch
    /// read for those the disk missed (one round trip when the tier is
    /// ``RemoteCacheBatchReading``). Remote hits are promoted as a single read's are.
    private func lookUp(_ keys: [String], refreshAfter: Int64) async throws(StashError) -> [LoadLookup<Value>] {
        var found = keys.map { memory?.core.loadLookup(forKey: $0, refreshAfter: refreshAfter) ?? .miss }
        let below: [Int] = keys.indices.filter { index in
            if case .fresh = found[index] { return false }
            return true
        }
        guard !below.isEmpty else { return found }
        // Per key: its stripe's generation, taken just before its local lookup (a local write
        // after it stops the promotion below), and what the disk holds.
        var onDisk: [(generation: UInt64, value: Value?)] = []
        onDisk.reserveCapacity(below.count)
        if let disk {
            // Chunks, so that a long list does not hold the disk tier's queue for all of it.
            for start in stride(from: 0, to: below.count, by: Self.bulkDiskChunk) {
                let chunk = below[start..<min(start + Self.bulkDiskChunk, below.count)]
                onDisk += try await disk.run { [self] () throws(StashError) in
                    try chunk.map { index throws(StashError) in
                        (stripes.generation(for: keys[index]), try valueBelowMemory(forKey: keys[index]))
                    }
                }
            }
        } else {
            for index in below {
                // As `valueThroughRemote`: the remote tier gets only keys a disk tier would take.
                if remoteLink != nil { try DiskCache<Value>.validate(keys[index]) }
                onDisk.append((stripes.generation(for: keys[index]), nil))
            }
        }
        var remoteKeys: [(index: Int, generation: UInt64)] = []
        for (position, index) in below.enumerated() {
            if let value = onDisk[position].value {
                found[index] = .fresh(value, isDue: false)
            } else if remoteLink != nil {
                remoteKeys.append((index, onDisk[position].generation))
            }
        }
        guard let remoteLink, !remoteKeys.isEmpty else { return found }
        let entries = await remoteLink.entries(forKeys: remoteKeys.map { keys[$0.index] })
        for ((index, generation), entry) in zip(remoteKeys, entries) {
            guard let entry else { continue }
            await promote(entry, forKey: keys[index], ifUnchangedSince: generation)
            found[index] = .fresh(entry.value, isDue: false)
        }
        return found
    }

    /// What the disk and remote tiers hold for `key`, unless the memory
    /// lookup (`memoryFound`) already found it fresh.
    private func lookBelowMemory(_ key: String, memoryFound: LoadLookup<Value>) async throws(StashError) -> LoadLookup<Value> {
        if case .fresh = memoryFound { return memoryFound }
        guard let value = try await awaitValueBelowMemory(forKey: key) else { return memoryFound }
        return .fresh(value, isDue: false)
    }
}

extension Cache: LoadingTarget {
    func freshValue(forKey key: String) -> Value? {
        memory?.core.freshValue(forKey: key)
    }

    func beginLoad(forKey key: String) -> UInt64 {
        loadTickets.withLock { $0.issue(key) }
    }

    func storeLoaded(_ loaded: LoadedValue<Value>, forKey key: String, ticket: UInt64, options: LoadOptions) async -> Bool {
        let value = loaded.value
        let (ttl, shares): (Duration?, Bool)
        if case .fleet(let remaining) = loaded.source {
            (ttl, shares) = (remaining, false)
        } else {
            (ttl, shares) = (options.ttl, true)
        }
        let grace = options.staleIfError ?? .zero
        let stored: (Bool, RemoteWriteOrder.Ticket?)
        if let disk {
            // storeLoadedNow throws nothing; `run` may not run it once the cache is closed.
            stored = (try? await disk.run { [self] () throws(StashError) in
                storeLoadedNow(value, forKey: key, ticket: ticket, ttl: ttl, grace: grace, shares: shares)
            }) ?? (false, nil)
        } else {
            stored = storeLoadedNow(value, forKey: key, ticket: ticket, ttl: ttl, grace: grace, shares: shares)
        }
        if case .loaderHoldingFleetLock(let lock) = loaded.source {
            // The waiting instances find the value once the lock is free.
            if let remoteTicket = stored.1 { await remoteLink?.send(.set(value, ttl: ttl), ticket: remoteTicket) }
            await lock.release()
        } else if let remoteTicket = stored.1 {
            remoteLink?.sendInBackground(.set(value, ttl: ttl), ticket: remoteTicket)
        }
        return stored.0
    }

    func endLoad(forKey key: String, ticket: UInt64) {
        loadTickets.withLock { $0.forget(ticket, for: key) }
    }

    /// Writes a loaded value to disk then memory, under the key's stripe lock,
    /// if its ticket holds, and (with a remote tier, when `shares`) takes the
    /// value's place in the key's order of remote changes. A failed local write
    /// is logged and leaves memory without the value.
    ///
    /// - Returns: Whether the value was stored, and its remote ticket.
    private func storeLoadedNow(
        _ value: Value, forKey key: String, ticket: UInt64, ttl: Duration?, grace: Duration, shares: Bool
    ) -> (Bool, RemoteWriteOrder.Ticket?) {
        do throws(StashError) {
            return try stripes.withChange(for: key) { () throws(StashError) -> (Bool, RemoteWriteOrder.Ticket?) in
                guard loadTickets.withLock({ $0.redeem(ticket, for: key) }) else { return (false, nil) }
                try _writeLocal(value, forKey: key, ttl: ttl, grace: grace)
                return (true, shares ? remoteLink?.order.enqueue(key) : nil)
            }
        } catch {
            loading.logStoreFailure(error)
            return (false, nil)
        }
    }
}
