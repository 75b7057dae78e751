/// Loads across a fleet: with ``LoadOptions/fleetLockTTL`` set and a remote
/// tier, a key that every tier misses is loaded by one instance of the fleet,
/// and the others take its value from the remote tier.
///
/// Each instance's load of the key (one per instance at a time, shared by its
/// callers) runs this in place of the caller's loader; the value it returns
/// says how it was got (``LoadedValue/Source``), which is what storing it does:
/// 1. Take the fleet lock on the key (`RemoteTierLink.acquireLock(forKey:ttl:)`; a tier that is
///    not ``RemoteCacheLocking`` has none: the load is local, as in 4).
/// 2. **Acquired**: read the remote tier once more (another instance may have
///    written the value and released the lock since this one's lookup): a hit
///    is the value. Else load; the value is then written to every tier, the
///    remote one waited for, and only then is the lock released, so that a
///    waiter that finds the lock free also finds the value.
/// 3. **Held elsewhere**: poll the remote tier, after 5 ms, then twice as long
///    each time up to 200 ms (or a quarter of the lock's time to live, if
///    shorter), timed on the cache's clock. A hit is the value, stored in the
///    local tiers with the shared copy's remaining time to live and not written
///    back. A miss tries the lock again, so that the instance that finds it
///    expired (its holder crashed, or failed and released it) loads next. Past
///    the lock's time to live since the first try, load locally.
/// 4. **Unavailable** (the remote tier fails): load locally.
///
/// Polling rather than waiting for the holder's invalidation message: a holder
/// that fails writes nothing, and the subscription may be down; a poll finds
/// both the value and a free lock. Callers with a stale value and a
/// ``LoadOptions/softTimeout`` get the stale value after that timeout while
/// the wait goes on, as for any slow load.
extension CacheCore {
    /// The pause before the first poll of a waiting instance.
    static var fleetFirstPause: Duration { .milliseconds(5) }
    /// The longest pause between polls.
    static var fleetLongestPause: Duration { .milliseconds(200) }

    /// `loader`, behind the fleet lock when `options` ask for one and the cache
    /// has a remote tier that locks; else `loader` itself.
    func fleetLoader(
        for options: LoadOptions, _ loader: @escaping @Sendable (String) async throws -> Value
    ) -> LoadingEngine<String, Value>.SourcedLoader {
        guard let remoteLink, remoteLink.locking != nil, let lockTTL = options.fleetLockTTL, lockTTL > .zero else {
            return LoadedValue.fromLoader(loader)
        }
        return { [self] key in try await loadThroughFleet(key, lockTTL: lockTTL, remoteLink, loader) }
    }

    /// One instance's load of `key` under the fleet lock (see above).
    private func loadThroughFleet(
        _ key: String, lockTTL: Duration, _ remoteLink: RemoteTierLink<Value>,
        _ loader: @Sendable (String) async throws -> Value
    ) async throws -> LoadedValue<Value> {
        let clock = loading.clock
        let deadline = clock.nanosecondsNow.addingClamped(lockTTL.nanosecondsClamped)
        let longestPause = min(Self.fleetLongestPause, lockTTL / 4).nanosecondsClamped
        var pause = Self.fleetFirstPause.nanosecondsClamped
        while true {
            switch await remoteLink.acquireLock(forKey: key, ttl: lockTTL) {
            case .acquired(let lock):
                if let entry = await remoteLink.entry(forKey: key) {
                    await lock.release()
                    return LoadedValue(entry.value, source: .fleet(ttl: entry.ttl))
                }
                do {
                    // Released once the value is stored (see `storeLoaded`).
                    return LoadedValue(try await loader(key), source: .loaderHoldingFleetLock(lock))
                } catch {
                    await lock.release()
                    throw error
                }
            case .unavailable:
                return LoadedValue(try await loader(key), source: .loader)
            case .heldElsewhere:
                let now = clock.nanosecondsNow
                guard now < deadline else { return LoadedValue(try await loader(key), source: .loader) }
                try await clock.sleep(until: min(now.addingClamped(pause), deadline))
                pause = min(pause * 2, longestPause)
                if let entry = await remoteLink.entry(forKey: key) {
                    return LoadedValue(entry.value, source: .fleet(ttl: entry.ttl))
                }
            }
        }
    }
}
