import Dispatch
import Logging

/// The thread-safe heart of ``MemoryCache``: a ``MemoryCacheStorage`` behind a
/// lock, plus what runs outside the lock (eviction callbacks, releasing
/// values) and in the background (auto-trim).
///
/// Locked entry points collect what they take out of the cache in an
/// ``EvictedEntries``, release the lock, and only then call ``onEvict`` and let
/// the values go, so that neither a callback nor a value's `deinit` ever runs
/// under the lock and either may call back into the cache.
@usableFromInline
final class MemoryCacheCore<Key: Hashable & Sendable, Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: every mutable property below is read and written only
    // with `lock` held; `name`, `logger` and `lock` are immutable. The two read
    // on every eviction are `@exclusivity(unchecked)` for the same reason as the
    // storage's properties (see MemoryCacheStorage).

    @usableFromInline let lock = Lock()
    @usableFromInline let storage: MemoryCacheStorage<Key, Value>
    @exclusivity(unchecked) @usableFromInline var onEvict: (@Sendable (Key, Value, EvictionReason) -> Void)?
    @exclusivity(unchecked) @usableFromInline var releasesValuesInBackground: Bool
    var removesAllOnMemoryPressure: Bool
    var removesAllOnEnteringBackground: Bool
    var autoTrimTimer = AutoTrimTimer()

    let name: String
    let logger: Logger

    /// Batches of at least this many entries are released on a background queue
    /// when ``releasesValuesInBackground`` is set; smaller ones cost less to
    /// release than to dispatch.
    @inlinable
    static var backgroundReleaseThreshold: Int { 64 }
    /// How many index buckets one locked step of a sweep examines.
    static var sweepBatch: Int { 1024 }

    init(
        name: String, policy: EvictionPolicy, countLimit: Int, costLimit: Int, ageLimit: Duration?,
        autoTrimInterval: Duration?, releasesValuesInBackground: Bool,
        removesAllOnMemoryPressure: Bool, removesAllOnEnteringBackground: Bool,
        clock: any CacheClock, logger: Logger
    ) {
        self.name = name
        self.logger = logger
        self.releasesValuesInBackground = releasesValuesInBackground
        self.removesAllOnMemoryPressure = removesAllOnMemoryPressure
        self.removesAllOnEnteringBackground = removesAllOnEnteringBackground
        storage = MemoryCacheStorage(
            policy: policy,
            countLimit: Self.validatedLimit(countLimit, "countLimit", logger),
            costLimit: Self.validatedLimit(costLimit, "costLimit", logger),
            ageLimit: Self.validatedAge(ageLimit, logger),
            clock: clock)
        setAutoTrimInterval(autoTrimInterval)
    }

    deinit {
        autoTrimTimer.cancel()
    }

    // MARK: - Running locked work

    /// Runs `body` on the storage with the lock held, then reports and releases
    /// whatever it evicted after unlocking.
    @inlinable
    func withStorage<Result>(
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
        guard !evicted.isEmpty else {
            lock.unlock()
            return result
        }
        let callback = onEvict
        let inBackground = releasesValuesInBackground
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
        if reason.isEviction {
            storage.evictions &+= detached.count
        }
        let callback = onEvict
        let inBackground = releasesValuesInBackground
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
            cursor = withStorage { storage, evicted in
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

    // MARK: - Auto-trim

    func setAutoTrimInterval(_ interval: Duration?) {
        let interval = AutoTrimTimer.validated(interval, logger: logger)
        lock.withLock {
            autoTrimTimer.reschedule(every: interval, on: sharedAutoTrimQueue, owner: self) { $0.removeStaleEntries() }
        }
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

/// One serial, low-priority queue for every memory cache's auto-trim timer.
private let sharedAutoTrimQueue = DispatchQueue(label: "Stash.MemoryCache.autoTrim", qos: .utility)
