extension CacheCore {
    // MARK: - Get or load

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

    /// See ``Cache/values(forKeys:options:orLoad:)``; `options` are the call's or the cache's.
    func values(
        forKeys keys: some Sequence<String>, options: LoadOptions,
        orLoad loader: @escaping @Sendable (Set<String>) async throws -> [String: Value]
    ) async throws -> [String: Value] {
        let refreshAfter = options.refreshAfter?.nanosecondsClamped ?? .max
        return try await loading.values(
            forKeys: keys, options: options, target: self,
            lookUp: { [self] keys in try await lookUp(keys, refreshAfter: refreshAfter) }, loader: loader)
    }

    /// See ``Cache/refreshValue(forKey:options:using:)``; `options` are the call's or the cache's.
    @discardableResult
    func refreshValue(
        forKey key: String, options: LoadOptions, using loader: @escaping @Sendable (String) async throws -> Value
    ) async throws -> Value {
        loading.forgetError(forKey: key)
        return try await loading.load(
            key, stale: nil, options: options, reloads: true, target: self,
            loader: LoadedValue.fromLoader(loader))
    }

    /// See ``Cache/invalidateValue(forKey:)-(String)``.
    @discardableResult
    func invalidateValue(forKey key: String) throws(StashError) -> Bool {
        try invalidateNow(key)
    }

    /// The async form of ``invalidateValue(forKey:)``: the disk work on the disk tier's queue.
    @discardableResult
    func invalidateValue(forKey key: String) async throws(StashError) -> Bool {
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
    /// ``RemoteCacheBatchReading``). Remote hits are promoted as a single read's are, in one turn of
    /// the disk queue per ``bulkDiskChunk`` hits.
    private func lookUp(_ keys: [String], refreshAfter: Int64) async throws(StashError) -> [LoadLookup<Value>] {
        var found = keys.map { memory?.loadLookup(forKey: $0, refreshAfter: refreshAfter) ?? .miss }
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
        var hits: [(key: String, entry: RemoteCacheEntry<Value>, generation: UInt64)] = []
        for ((index, generation), entry) in zip(remoteKeys, entries) {
            guard let entry else { continue }
            hits.append((keys[index], entry, generation))
            found[index] = .fresh(entry.value, isDue: false)
        }
        await promote(hits)
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

extension CacheCore: LoadingTarget {
    func freshValue(forKey key: String) -> Value? {
        memory?.freshValue(forKey: key)
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

    /// Stores what a bulk load returned: the local writes in one disk transaction per chunk (see
    /// ``writeLocally(_:ttl:grace:admit:)``), each key only while its load ticket holds, then one
    /// batch to the remote tier, in the background. A failed local write is logged.
    func storeBulkLoaded(_ loaded: [(key: String, value: Value, ticket: UInt64)], options: LoadOptions) async {
        let (written, failure) = await writeLocally(
            loaded.map { ($0.key, $0.value) }, ttl: options.ttl, grace: options.staleIfError ?? .zero
        ) { [self] index, key in
            loadTickets.withLock { $0.redeem(loaded[index].ticket, for: key) }
        }
        if let failure { loading.logStoreFailure(failure) }
        remoteLink?.sendValuesInBackground(written, ttl: options.ttl)
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
