/// A fleet-wide lock on one key, taken through a cache's remote tier so that
/// one instance of the fleet loads a missing value while the others wait for
/// it or serve a stale one. Taken through the cache's remote link (below), when its tier is
/// ``RemoteCacheLocking``; `CacheCore+FleetLoad.swift` is the protocol of a load that uses it.
///
/// The lock expires by itself after its time to live, so a crashed holder
/// never blocks the fleet. Release it with ``release()`` after the loaded value
/// has been written through the cache (so the waiters find it).
///
/// Thread-safety: a value type, `Sendable`.
struct FleetLoadLock: Sendable {
    /// What an attempt to take the lock found.
    enum Attempt: Sendable {
        /// This instance holds the lock: load, write through the cache, then release.
        case acquired(FleetLoadLock)
        /// Another instance holds it: wait for its value (a remote hit, or an
        /// invalidation of the key) or serve a stale one.
        case heldElsewhere
        /// No lock could be taken: the cache has no remote tier, or the remote
        /// tier failed (logged once per outage). Load locally.
        case unavailable
    }

    /// The caller's key the lock is for.
    let key: String
    private let releaseBody: @Sendable () async throws -> Void

    init(key: String, release: @escaping @Sendable () async throws -> Void) {
        self.key = key
        self.releaseBody = release
    }

    /// Releases the lock if this holder still has it.
    ///
    /// - Returns: `false` when the lock had expired (another instance may hold
    ///   it now) or the remote tier failed; the lock then expires by itself.
    @discardableResult
    func release() async -> Bool {
        do {
            try await releaseBody()
            return true
        } catch {
            return false
        }
    }
}

// MARK: - Taking the lock through a remote tier

extension RemoteTierLink {
    /// Tries once to take the fleet-wide lock on `key`: ``FleetLoadLock/Attempt/unavailable`` when
    /// the tier is not ``RemoteCacheLocking`` or fails.
    func acquireLock(forKey key: String, ttl: Duration) async -> FleetLoadLock.Attempt {
        guard let locking else { return .unavailable }
        do {
            let lock = try await Self.acquireLock(on: locking, forKey: key, ttl: ttl)
            recordSuccess()
            return lock.map { .acquired($0) } ?? .heldElsewhere
        } catch {
            recordFailure(error, while: "locking \(key)")
            return .unavailable
        }
    }

    /// Opens the existential, so that the lock keeps its tier's own type.
    private static func acquireLock<Tier: RemoteCacheLocking>(
        on tier: Tier, forKey key: String, ttl: Duration
    ) async throws -> FleetLoadLock? {
        guard let lock = try await tier.acquireLock(forKey: key, ttl: ttl) else { return nil }
        return FleetLoadLock(key: key) { try await tier.releaseLock(lock) }
    }
}
