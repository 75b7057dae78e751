extension MemoryCacheCore: LoadingTarget {
    /// Looks `key` up for a get-or-load (see ``EntryTable/loadLookup(forKey:hash:refreshAfter:evicted:)``).
    @inlinable @inline(__always)
    func loadLookup(forKey key: Key, refreshAfter: Int64) -> LoadLookup<Value> {
        let hash = EntryTable<Key, Value>.hash(key)
        return withLockedTable { table, evicted in
            table.loadLookup(forKey: key, hash: hash, refreshAfter: refreshAfter, evicted: &evicted)
        }
    }

    /// The get-or-load work after a lookup that was not a plain fresh hit:
    /// out of line, so that the inlined hit path stays small.
    @usableFromInline
    func resolveLoad(
        _ key: Key, found: LoadLookup<Value>, options: LoadOptions,
        loader: @escaping @Sendable (Key) async throws -> Value
    ) async throws -> Value {
        try await loading.resolve(key, found: found, options: options, target: self, loader: LoadedValue.fromLoader(loader))
    }

    func freshValue(forKey key: Key) -> Value? {
        let hash = EntryTable<Key, Value>.hash(key)
        return lock.withLock { table.peekValue(forKey: key, hash: hash) }
    }

    func beginLoad(forKey key: Key) -> UInt64 {
        lock.withLock { _loadTickets.issue(key) }
    }

    /// A memory cache has no fleet: every source is stored alike.
    func storeLoaded(_ loaded: LoadedValue<Value>, forKey key: Key, ticket: UInt64, options: LoadOptions) async -> Bool {
        storeLoadedNow(loaded.value, forKey: key, ticket: ticket, options: options)
    }

    /// ``storeLoaded(_:forKey:ticket:options:)`` without suspending.
    func storeLoadedNow(_ value: Value, forKey key: Key, ticket: UInt64, options: LoadOptions) -> Bool {
        let hash = EntryTable<Key, Value>.hash(key)
        let now = table.clock.nanosecondsNow
        let cost = Swift.max(costOfLoadedValue?(value) ?? 0, 0)
        let ttl = options.ttl?.nanosecondsClamped
        let grace = Swift.max(options.staleIfError?.nanosecondsClamped ?? 0, 0)
        return withLockedTable { table, evicted in
            guard _loadTickets.redeem(ticket, for: key) else { return false }
            table.setValue(
                value, forKey: key, hash: hash, cost: cost, ttl: ttl, grace: grace, now: now, evicted: &evicted)
            return true
        }
    }

    /// Stores a loaded value for a ``Cache``, which keeps the tickets itself:
    /// as ``setValue(_:forKey:cost:ttl:)``, with a fail-safe grace.
    func setLoadedValue(_ value: Value, forKey key: Key, cost: Int, ttl: Duration?, grace: Duration?) {
        let hash = EntryTable<Key, Value>.hash(key)
        let now = table.clock.nanosecondsNow
        let ttl = ttl?.nanosecondsClamped
        let grace = Swift.max(grace?.nanosecondsClamped ?? 0, 0)
        withLockedTable { table, evicted in
            _loadTickets.void(key)
            table.setValue(
                value, forKey: key, hash: hash, cost: Swift.max(cost, 0), ttl: ttl, grace: grace, now: now,
                evicted: &evicted)
        }
    }

    func endLoad(forKey key: Key, ticket: UInt64) {
        lock.withLock { _loadTickets.forget(ticket, for: key) }
    }

    /// Makes `key`'s entry expire now (kept for its grace, as a fail-safe),
    /// voids its load under way and forgets its cached error.
    func invalidate(_ key: Key) -> Bool {
        let hash = EntryTable<Key, Value>.hash(key)
        let wasFresh = withLockedTable { table, evicted in
            _loadTickets.void(key)
            return table.expire(forKey: key, hash: hash, evicted: &evicted)
        }
        loading.forgetError(forKey: key)
        return wasFresh
    }
}
