/// A ``Cache`` with a ``RemoteCacheTier``: the tier shared by a fleet of servers.
///
/// - **Reads** (`async` only) go memory → disk → remote. A remote hit is
///   promoted into the local tiers with its remaining time to live, unless a
///   write, removal or invalidation of a key of the same stripe happened while
///   it was being read, so a slow read never puts an older value over a newer
///   one. A remote failure is a miss.
/// - **Writes and removals** reach the local tiers first, exactly as without a
///   remote tier, then the remote tier. Changes of one key reach the remote
///   tier in the order they reached the local tiers (a per-key queue), so the
///   shared copy ends as the last local write left it. A remote failure never
///   fails the call and never undoes the local change: it is logged once per
///   outage, and the key is marked stale (below). The `async` forms wait for
///   the remote tier; the synchronous forms send to it in the background.
/// - **Invalidations** (a ``RemoteCacheInvalidating`` tier): the cache subscribes
///   to the tier's invalidations when it is created, and drops a key that another
///   instance changed from its memory and disk tiers (everything, for
///   ``RemoteInvalidation/all``). Over a tier without them, local copies live until
///   their time to live ends or they are evicted.
/// - **Stale keys**: a key whose change failed to reach the remote tier is not
///   read from it (its shared copy may be older than what this instance
///   wrote), survives an invalidation of everything, and is removed from the
///   remote tier (telling the other instances) once it answers again and the
///   subscription is back (so that the invalidation of everything that comes
///   with its return still finds the key marked). So no caller of this instance
///   reads a value older than one this instance wrote, across a remote outage, a
///   restart of the remote store, or a lost subscription.
///
/// A disk tier reopened after the process was down may hold values that other
/// instances changed meanwhile: their invalidations were never heard. Give
/// entries a time to live, or empty the disk tier at start when that matters.
extension CacheCore {
    /// Starts the invalidation subscription (from the initialiser).
    func startReceivingInvalidations() {
        remoteLink?.startReceivingInvalidations { [weak self] invalidation in
            self?.receive(invalidation)
        }
    }

    // MARK: - Reading

    /// Memory (already missed by the caller), disk, then the remote tier.
    func valueThroughRemote(forKey key: String, _ remoteLink: RemoteTierLink<Value>) async throws(StashError) -> Value? {
        // Taken before the local lookups: a local write after it stops the promotion below.
        let generation = stripes.generation(for: key)
        if let disk {
            if let hit = try await disk.run({ [self] () throws(StashError) in try valueBelowMemory(forKey: key) }) { return hit }
        } else {
            try DiskCache<Value>.validate(key)
        }
        guard let entry = await remoteLink.entry(forKey: key) else { return nil }
        // Awaited, not left to the background: the memory copy's cost is the encoded size the disk
        // write returns, and reads that returned first would let a burst of remote hits queue an
        // unbounded number of disk writes.
        await promote(entry, forKey: key, ifUnchangedSince: generation)
        return entry.value
    }

    /// Whether a local tier, else the remote tier, holds `key`.
    func containsThroughRemote(_ key: String, _ remoteLink: RemoteTierLink<Value>) async throws(StashError) -> Bool {
        if memory?.contains(key) == true { return true }
        if let disk {
            if try await disk.contains(key) { return true }
        } else {
            try DiskCache<Value>.validate(key)
        }
        return await remoteLink.entry(forKey: key) != nil
    }

    /// Puts a remote hit into the local tiers with its remaining time to live,
    /// unless `key`'s stripe changed since `generation`.
    func promote(_ entry: RemoteCacheEntry<Value>, forKey key: String, ifUnchangedSince generation: UInt64) async {
        await promote([(key, entry, generation)])
    }

    /// Puts remote hits into the local tiers, each with its remaining time to live and unless its
    /// key's stripe changed since its generation: with a disk tier, one turn of the disk queue per
    /// ``bulkDiskChunk`` hits (a bulk read's promotions took one turn each). A failed promotion
    /// costs the key's next read another remote round trip, nothing more.
    func promote(_ hits: [(key: String, entry: RemoteCacheEntry<Value>, generation: UInt64)]) async {
        let hits = hits.filter { hit in hit.entry.ttl.map { $0 > .zero } ?? true }
        guard let disk else {
            guard let memory else { return }
            for (key, entry, generation) in hits {
                _ = try? stripes.withLock(for: key, ifUnchangedSince: generation) { () throws(StashError) in
                    memory.setValue(entry.value, forKey: key, cost: cost(entry.value, nil), ttl: entry.ttl)
                }
            }
            return
        }
        for start in stride(from: 0, to: hits.count, by: Self.bulkDiskChunk) {
            let chunk = hits[start..<min(start + Self.bulkDiskChunk, hits.count)]
            _ = try? await disk.run { [self] () throws(StashError) in
                for (key, entry, generation) in chunk {
                    _ = try? stripes.withLock(for: key, ifUnchangedSince: generation) { () throws(StashError) in
                        let size = try disk.setValueReturningSize(entry.value, forKey: key, ttl: entry.ttl)
                        memory?.setValue(entry.value, forKey: key, cost: cost(entry.value, size), ttl: entry.ttl)
                    }
                }
            }
        }
    }

    // MARK: - Writing

    /// The local write, then the remote one in `key`'s order.
    func setValueThroughRemote(
        _ value: Value, forKey key: String, ttl: Duration?, _ remoteLink: RemoteTierLink<Value>
    ) async throws(StashError) {
        let ticket: RemoteWriteOrder.Ticket?
        if let disk {
            ticket = try await disk.run { [self] () throws(StashError) in try setLocalValue(value, forKey: key, ttl: ttl) }
        } else {
            ticket = try setLocalValue(value, forKey: key, ttl: ttl)
        }
        if let ticket { await remoteLink.send(.set(value, ttl: ttl), ticket: ticket) }
    }

    /// The local removal, then the remote one in `key`'s order.
    func removeValueThroughRemote(forKey key: String, _ remoteLink: RemoteTierLink<Value>) async throws(StashError) -> Bool {
        let local: (held: Bool, ticket: RemoteWriteOrder.Ticket?)
        if let disk {
            local = try await disk.run { [self] () throws(StashError) in try removeLocalValue(forKey: key) }
        } else {
            local = try removeLocalValue(forKey: key)
        }
        guard let ticket = local.ticket else { return local.held }
        let heldRemotely = await remoteLink.send(.remove, ticket: ticket)
        return local.held || heldRemotely
    }

    /// Empties the local tiers, then the remote tier's namespace (also when the disk fails).
    func removeAllThroughRemote(
        progress: @escaping @Sendable (_ removed: Int, _ total: Int) -> Void, _ remoteLink: RemoteTierLink<Value>
    ) async throws(StashError) {
        do throws(StashError) {
            if let disk {
                try await disk.run { [self] () throws(StashError) in try removeLocalValues(progress: progress) }
            } else {
                try removeLocalValues(progress: progress)
            }
        } catch {
            await remoteLink.removeAll()
            throw error
        }
        await remoteLink.removeAll()
    }

    // MARK: - Invalidations

    /// Drops what another instance changed from the local tiers. Called on the
    /// tier's thread (an event loop), so disk work moves to the disk tier's queue.
    func receive(_ invalidation: RemoteInvalidation) {
        switch invalidation {
        case .key(let key):
            guard let disk else {
                _ = try? stripes.withChange(for: key) { () throws(StashError) in
                    loadTickets.withLock { $0.void(key) }
                    return memory?.removeValue(forKey: key)
                }
                remoteLink?.didApply(invalidation)
                return
            }
            // Memory at once, here, before any disk work: from now on no read serves the old
            // value, since reads skip the disk for a key whose invalidation is under way.
            stripes.beginInvalidation(of: key) {
                loadTickets.withLock { $0.void(key) }
                memory?.removeValue(forKey: key)
            }
            background.start { [self] in
                // A disk failure leaves the disk's copy, readable again once the invalidation ends.
                _ = try? await disk.run { [self] () throws(StashError) in
                    try stripes.endInvalidation(of: key) { () throws(StashError) in
                        // Memory is left alone: since the mark, only this instance's own writes,
                        // newer than the invalidation, can have put the key there.
                        _ = try disk.removeValue(forKey: key)
                    }
                }
                remoteLink?.didApply(invalidation)
            }
        case .all:
            loadTickets.withLock { $0.voidAll() }
            // Taken now: a loss heard while the drop runs is not ended by it.
            let losses = remoteLink?.subscriptionLosses ?? 0
            background.start { [self] in
                await dropLocalValuesExceptUnsent()
                remoteLink?.subscriptionRestored(after: losses)
                remoteLink?.didApply(invalidation)
            }
        case .subscriptionLost:
            remoteLink?.subscriptionLost()
            remoteLink?.didApply(invalidation)
        }
    }

    /// Empties the local tiers but for the keys whose shared copies are older
    /// than the local ones (stale, or with a change on its way), holding every
    /// stripe lock so that no write slips between choosing and dropping.
    private func dropLocalValuesExceptUnsent() async {
        let drop: @Sendable () throws(StashError) -> Void = { [self] () throws(StashError) in
            try stripes.withEveryLock { () throws(StashError) in
                let keep = remoteLink?.keysToKeepLocally ?? []
                guard let disk else {
                    dropMemory(except: keep)
                    return
                }
                var kept: [(key: String, found: DiskCacheHit<Value>)] = []
                for key in keep {
                    if let found = try? disk.valueWithMetadata(forKey: key) { kept.append((key, found)) }
                }
                dropMemory(except: keep)
                try disk.removeAll()
                let now = disk.nanosecondsNow
                for (key, found) in kept {
                    var ttl: Duration?
                    if let expiration = found.expiration {
                        guard expiration > now else { continue }
                        ttl = .nanoseconds(expiration - now)
                    }
                    _ = try? disk.setValueReturningSize(found.value, forKey: key, ttl: ttl)
                }
            }
        }
        if let disk {
            _ = try? await disk.run(drop)
        } else {
            try? drop()
        }
    }

    private func dropMemory(except keep: Set<String>) {
        guard let memory else { return }
        guard !keep.isEmpty else {
            memory.removeAll()
            return
        }
        for key in memory.keys where !keep.contains(key) {
            memory.removeValue(forKey: key)
        }
    }
}
