import Dispatch
import Logging

/// The thread-safe heart of ``MemoryCache``: a ``MemoryCacheStorage`` behind a
/// lock, plus what runs outside the lock (eviction callbacks, releasing
/// values) and in the background (auto-trim).
///
/// The core is the only owner of its lock and of everything the lock guards:
/// ``MemoryCache`` calls its methods and never touches `lock` or `storage`.
/// Methods and properties whose names start with `_` assume the lock is held.
///
/// Locked entry points collect what they take out of the cache in an
/// ``EvictedEntries``, release the lock, and only then call the eviction
/// callback and let the values go, so that neither a callback nor a value's
/// `deinit` ever runs under the lock and either may call back into the cache.
@usableFromInline
final class MemoryCacheCore<Key: Hashable & Sendable, Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `storage` and every `_`-prefixed property are read
    // and written only with `lock` held, by this class's own methods; `name`,
    // `logger` and `lock` are immutable. The two read on every eviction are
    // `@exclusivity(unchecked)`, for the reason given on MemoryCacheStorage.

    /// Guards `storage` and the `_` properties. Internal only so that the
    /// inlinable entry points below can take it; nothing outside this class does.
    @usableFromInline let lock = Lock()
    @usableFromInline let storage: MemoryCacheStorage<Key, Value>
    @exclusivity(unchecked) @usableFromInline var _onEvict: (@Sendable (Key, Value, EvictionReason) -> Void)?
    @exclusivity(unchecked) @usableFromInline var _releasesValuesInBackground: Bool
    var _removesAllOnMemoryPressure: Bool
    var _removesAllOnEnteringBackground: Bool
    var _autoTrimTimer = AutoTrimTimer()

    let name: String
    let logger: Logger

    #if DEBUG
    /// Whether every locked mutation ends with `storage._checkInvariants()`,
    /// as swift-collections does under its internal-checks flag. Tests' caches
    /// set it; debug builds only, so release builds pay nothing.
    @usableFromInline var _checksInvariants = false
    #endif

    /// Batches of at least this many entries are released on a background queue
    /// when ``releasesValuesInBackground`` is set; smaller ones cost less to
    /// release than to dispatch.
    @inlinable
    static var backgroundReleaseThreshold: Int { 64 }
    /// How many index buckets one locked step of a sweep examines.
    static var sweepBatch: Int { 1024 }

    init(configuration: MemoryCache<Key, Value>.Configuration) {
        name = configuration.name
        logger = configuration.logger
        _releasesValuesInBackground = configuration.releasesValuesInBackground
        _removesAllOnMemoryPressure = configuration.removesAllOnMemoryPressure
        _removesAllOnEnteringBackground = configuration.removesAllOnEnteringBackground
        storage = MemoryCacheStorage(
            policy: configuration.policy,
            countLimit: Self.validatedLimit(configuration.countLimit, "countLimit", logger),
            costLimit: Self.validatedLimit(configuration.costLimit, "costLimit", logger),
            ageLimit: Self.validatedAge(configuration.ageLimit, logger),
            clock: configuration.clock)
        autoTrimInterval = configuration.autoTrimInterval
    }

    deinit {
        _autoTrimTimer.cancel()
    }

    // MARK: - Reading and writing

    @inlinable
    func value(forKey key: Key) -> Value? {
        let hash = MemoryCacheStorage<Key, Value>.hash(key)
        return withLockedStorage { storage, evicted in
            storage.value(forKey: key, hash: hash, evicted: &evicted)
        }
    }

    @inlinable
    func contains(_ key: Key) -> Bool {
        let hash = MemoryCacheStorage<Key, Value>.hash(key)
        return lock.withLock { storage.contains(key, hash: hash) }
    }

    /// Hashes, reads the clock and clamps the cost before taking the lock.
    @inlinable
    func setValue(_ value: Value, forKey key: Key, cost: Int, ttl: Duration?) {
        let hash = MemoryCacheStorage<Key, Value>.hash(key)
        let now = storage.clock.nanosecondsNow
        let ttlNanos = ttl?.nanosecondsClamped
        let cost = Swift.max(cost, 0)
        withLockedStorage { storage, evicted in
            storage.setValue(value, forKey: key, hash: hash, cost: cost, ttl: ttlNanos, now: now, evicted: &evicted)
        }
    }

    @inlinable
    func removeValue(forKey key: Key) -> Value? {
        let hash = MemoryCacheStorage<Key, Value>.hash(key)
        return withLockedStorage { storage, evicted in
            storage.removeValue(forKey: key, hash: hash, reason: .removed, evicted: &evicted)
        }
    }

    // MARK: - Inspection

    var count: Int { lock.withLock { storage.count } }

    var totalCost: Int { lock.withLock { storage.totalCost } }

    var statistics: CacheStatistics {
        lock.withLock { CacheStatistics(hits: storage.hits, misses: storage.misses, evictions: storage.evictions) }
    }

    func snapshot() -> [(key: Key, value: Value, cost: Int)] {
        lock.withLock { storage.snapshot() }
    }

    /// Checks the storage's invariants under the lock (debug builds only).
    func checkInvariants() {
        lock.withLock { storage._checkInvariants() }
    }

    // MARK: - Settings

    var onEvict: (@Sendable (Key, Value, EvictionReason) -> Void)? {
        get { lock.withLock { _onEvict } }
        set { lock.withLock { _onEvict = newValue } }
    }

    var releasesValuesInBackground: Bool {
        get { lock.withLock { _releasesValuesInBackground } }
        set { lock.withLock { _releasesValuesInBackground = newValue } }
    }

    var removesAllOnMemoryPressure: Bool {
        get { lock.withLock { _removesAllOnMemoryPressure } }
        set { lock.withLock { _removesAllOnMemoryPressure = newValue } }
    }

    var removesAllOnEnteringBackground: Bool {
        get { lock.withLock { _removesAllOnEnteringBackground } }
        set { lock.withLock { _removesAllOnEnteringBackground = newValue } }
    }

    // MARK: - Running locked work

    /// Runs `body` on the storage with the lock held, then reports and releases
    /// whatever it evicted after unlocking.
    @inlinable
    func withLockedStorage<Result>(
        _ body: (MemoryCacheStorage<Key, Value>, inout EvictedEntries<Key, Value>) throws -> Result
    ) rethrows -> Result {
        var evicted = EvictedEntries<Key, Value>()
        lock.lock()
        let result: Result
        do {
            result = try body(storage, &evicted)
        } catch {
            lock.unlock()
            throw error
        }
        #if DEBUG
        if _checksInvariants { storage._checkInvariants() }
        #endif
        guard !evicted.isEmpty else {
            lock.unlock()
            return result
        }
        let callback = _onEvict
        let inBackground = _releasesValuesInBackground
        lock.unlock()
        finish(evicted, callback: callback, inBackground: inBackground)
        return result
    }

    /// Runs the callback for each evicted entry, then releases them, on a
    /// background queue if there are many and the cache is set to.
    ///
    /// Inlinable so that the common case (one replaced value, no callback)
    /// compiles to a specialised release in the caller, with no generic
    /// metadata lookups.
    @inlinable
    func finish(
        _ evicted: consuming EvictedEntries<Key, Value>,
        callback: (@Sendable (Key, Value, EvictionReason) -> Void)?,
        inBackground: Bool
    ) {
        if let callback {
            evicted.forEach { callback($0.key, $0.value, $0.reason) }
        }
        if inBackground && evicted.count >= Self.backgroundReleaseThreshold {
            releaseInBackground(evicted)
        }
    }

    /// Hands a large batch of evicted entries to a background queue to release.
    @usableFromInline
    func releaseInBackground(_ evicted: consuming EvictedEntries<Key, Value>) {
        let batch = evicted
        DispatchQueue.global(qos: .utility).async { _ = batch }
    }

    /// Empties the cache in O(1) under the lock, then reports each entry with
    /// `reason` and releases them outside it.
    func removeAll(reason: EvictionReason) {
        lock.lock()
        let detached = storage.detachAll()
        #if DEBUG
        if _checksInvariants { storage._checkInvariants() }
        #endif
        if reason.isEviction {
            storage.evictions &+= detached.count
        }
        let callback = _onEvict
        let inBackground = _releasesValuesInBackground
        lock.unlock()
        if let callback {
            detached.forEach { callback($0, $1, reason) }
        }
        if inBackground && detached.count >= Self.backgroundReleaseThreshold {
            DispatchQueue.global(qos: .utility).async { detached.release() }
        } else {
            detached.release()
        }
    }

    /// Removes every entry for which `reason` gives a reason, in locked batches
    /// of ``sweepBatch`` buckets so the lock is never held for long. O(n) in all.
    func sweep(_ reason: @escaping (MemoryCacheStorage<Key, Value>, Int32) -> EvictionReason?) {
        var cursor: Int? = 0
        while let start = cursor {
            cursor = withLockedStorage { storage, evicted in
                storage.sweep(from: start, bucketLimit: Self.sweepBatch, into: &evicted) { reason(storage, $0) }
            }
        }
    }

    /// Removes expired entries and entries whose content was discarded.
    /// What the background auto-trim runs. Skips the scan when nothing can be stale.
    func removeStaleEntries() {
        let needed = lock.withLock {
            storage.expiringCount > 0 || storage.ageLimit != .max || storage.checksDiscardable
        }
        guard needed else { return }
        sweep { storage, slot in storage.staleReason(slot, now: nil) }
    }

    // MARK: - Validation

    static func validatedLimit(_ limit: Int, _ name: String, _ logger: Logger) -> Int {
        if limit < 0 {
            logger.warning("\(name) \(limit) is negative; using 0, which stores nothing")
            return 0
        }
        return limit
    }

    static func validatedAge(_ age: Duration?, _ logger: Logger) -> Int64 {
        guard let age else { return .max }
        let nanos = age.nanosecondsClamped
        if nanos < 0 {
            logger.warning("ageLimit \(age) is negative; using 0, which stores nothing")
            return 0
        }
        return nanos
    }
}
