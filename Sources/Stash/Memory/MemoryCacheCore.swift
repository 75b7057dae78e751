import Dispatch
import Logging

/// The thread-safe heart of ``MemoryCache``: an ``EntryTable`` behind a
/// lock, plus what runs outside the lock (eviction callbacks, releasing
/// values) and in the background (auto-trim).
///
/// The core is the only owner of its lock and of everything the lock guards:
/// ``MemoryCache`` calls its methods and never touches `lock` or `table`.
/// Methods and properties whose names start with `_` assume the lock is held.
///
/// Locked entry points collect what they take out of the cache in an
/// ``EvictedEntries``, release the lock, and only then call the eviction
/// callback and let the values go, so that neither a callback nor a value's
/// `deinit` ever runs under the lock and either may call back into the cache.
@usableFromInline
final class MemoryCacheCore<Key: Hashable & Sendable, Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `table` and every `_`-prefixed property are read
    // and written only with `lock` held, by this class's own methods, except
    // the table's striped read path, which takes its stripe lock instead (the
    // protocol is documented on EntryTable); `label`,
    // `logger` and `lock` are immutable. The two read on every eviction are
    // `@exclusivity(unchecked)`, for the reason given on EntryTable.

    /// Guards `table` and the `_` properties (the policy lock; adaptive, see
    /// ``Lock/init(adaptive:)``). Internal only so that the
    /// inlinable entry points below can take it; nothing outside this class does.
    @usableFromInline let lock = Lock(adaptive: true)
    @usableFromInline let table: EntryTable<Key, Value>
    @exclusivity(unchecked) @usableFromInline var _onEvict: (@Sendable (Key, Value, EvictionReason) -> Void)?
    @exclusivity(unchecked) @usableFromInline var _releasesValuesInBackground: Bool
    var _removesAllOnMemoryPressure: Bool
    var _removesAllOnEnteringBackground: Bool
    var _autoTrimTimer = AutoTrimTimer()
    /// The ticket of each load under way (see ``LoadingTarget``); empty when
    /// none is, so that writes pay one branch for it.
    @exclusivity(unchecked) @usableFromInline var _loadTickets = LoadTickets<Key>()

    let label: String
    let logger: Logger
    /// Runs get-or-load calls.
    let loading: LoadingEngine<Key, Value>
    /// The options of get-or-load calls that give none.
    @usableFromInline let loadOptions: LoadOptions
    /// `loadOptions.refreshAfter` in nanoseconds (`Int64.max` for none), read on
    /// every get-or-load hit without copying the options.
    @usableFromInline let defaultRefreshAfter: Int64
    /// The cost of a loaded value; `nil` for 0.
    let costOfLoadedValue: (@Sendable (Value) -> Int)?

    #if DEBUG
    /// Whether every locked mutation ends with `table._checkInvariants()`,
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
        label = configuration.label
        logger = configuration.logger
        _releasesValuesInBackground = configuration.releasesValuesInBackground
        _removesAllOnMemoryPressure = configuration.removesAllOnMemoryPressure
        _removesAllOnEnteringBackground = configuration.removesAllOnEnteringBackground
        table = EntryTable(
            policy: configuration.policy,
            countLimit: Self.validatedLimit(configuration.countLimit, "countLimit", logger),
            costLimit: Self.validatedLimit(configuration.costLimit, "costLimit", logger),
            ageLimit: Self.validatedAge(configuration.ageLimit, logger),
            clock: configuration.clock)
        loading = LoadingEngine(clock: configuration.clock, logger: configuration.logger)
        loadOptions = configuration.loadOptions
        defaultRefreshAfter = configuration.loadOptions.refreshAfter?.nanosecondsClamped ?? .max
        costOfLoadedValue = configuration.loadedValueCost
        autoTrimInterval = configuration.autoTrimInterval
    }

    deinit {
        _autoTrimTimer.cancel()
    }

    // MARK: - Reading and writing

    // The facade's hot paths call these; `@inline(__always)` keeps them in the
    // caller's body, as they were when the facade held them, rather than behind
    // a call to an out-of-line specialisation.

    /// Reads with the key's stripe lock only when the policy allows it (see
    /// ``EntryTable``); an expired or discarded entry, or another policy,
    /// takes the policy lock, which removes the entry and counts the miss.
    @inlinable @inline(__always)
    func value(forKey key: Key) -> Value? {
        let hash = EntryTable<Key, Value>.hash(key)
        if table.readsConcurrently {
            switch table.concurrentValue(forKey: key, hash: hash) {
            case .hit(let value): return value
            case .miss: return nil
            case .needsPolicyLock: break
            }
        }
        return withLockedTable { table, evicted in
            table.value(forKey: key, hash: hash, evicted: &evicted)
        }
    }

    /// `value(forKey:)` without counting: the re-check after a counted miss.
    func uncountedValue(forKey key: Key) -> Value? {
        let hash = EntryTable<Key, Value>.hash(key)
        return withLockedTable { table, evicted in
            table.uncountedValue(forKey: key, hash: hash, evicted: &evicted)
        }
    }

    @inlinable @inline(__always)
    func contains(_ key: Key) -> Bool {
        let hash = EntryTable<Key, Value>.hash(key)
        return lock.withLock { table.contains(key, hash: hash) }
    }

    /// Hashes, reads the clock and clamps the cost before taking the lock.
    @inlinable @inline(__always)
    func setValue(_ value: Value, forKey key: Key, cost: Int, ttl: Duration?) {
        let hash = EntryTable<Key, Value>.hash(key)
        let now = table.clock.nanosecondsNow
        let ttlNanos = ttl?.nanosecondsClamped
        let cost = Swift.max(cost, 0)
        withLockedTable { table, evicted in
            _loadTickets.void(key)
            table.setValue(value, forKey: key, hash: hash, cost: cost, ttl: ttlNanos, now: now, evicted: &evicted)
        }
    }

    @inlinable @inline(__always)
    func removeValue(forKey key: Key) -> Value? {
        let hash = EntryTable<Key, Value>.hash(key)
        return withLockedTable { table, evicted in
            _loadTickets.void(key)
            return table.removeValue(forKey: key, hash: hash, reason: .removed, evicted: &evicted)
        }
    }

    // MARK: - Inspection

    var count: Int { lock.withLock { table.count } }

    var totalCost: Int { lock.withLock { table.totalCost } }

    var statistics: CacheStatistics {
        var statistics = lock.withLock {
            let striped = table.stripeCounters()
            return CacheStatistics(
                hits: table.hits &+ striped.hits, misses: table.misses &+ striped.misses,
                evictions: table.evictions.total, evictionsByReason: table.evictions.byReason)
        }
        loading.addCounters(to: &statistics)
        return statistics
    }

    func snapshot() -> [(key: Key, value: Value, cost: Int)] {
        lock.withLock { table.snapshot() }
    }

    /// Checks the table's invariants under the lock (debug builds only).
    func checkInvariants() {
        lock.withLock { table._checkInvariants() }
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

    /// Runs `body` on the table with the lock held, then reports and releases
    /// whatever it evicted after unlocking.
    @inlinable
    func withLockedTable<Result>(
        _ body: (EntryTable<Key, Value>, inout EvictedEntries<Key, Value>) throws -> Result
    ) rethrows -> Result {
        var evicted = EvictedEntries<Key, Value>()
        lock.lock()
        let result: Result
        do {
            result = try body(table, &evicted)
        } catch {
            lock.unlock()
            throw error
        }
        #if DEBUG
        if _checksInvariants { table._checkInvariants() }
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
        let detached = table.detachAll()
        if reason == .removeAll { _loadTickets.voidAll() }
        #if DEBUG
        if _checksInvariants { table._checkInvariants() }
        #endif
        table.evictions.record(reason, count: detached.count)
        let callback = _onEvict
        let inBackground = _releasesValuesInBackground
        lock.unlock()
        if reason == .removeAll { loading.forgetErrors() }
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
    func sweep(_ reason: @escaping (EntryTable<Key, Value>, Int32) -> EvictionReason?) {
        var cursor: Int? = 0
        while let start = cursor {
            cursor = withLockedTable { table, evicted in
                table.sweep(from: start, bucketLimit: Self.sweepBatch, into: &evicted) { reason(table, $0) }
            }
        }
    }

    /// Removes expired entries and entries whose content was discarded.
    /// What the background auto-trim runs. Skips the scan when nothing can be stale.
    func removeStaleEntries() {
        let needed = lock.withLock {
            table.expiringCount > 0 || table.ageLimit != .max || table.checksDiscardable
        }
        guard needed else { return }
        sweep { table, slot in table.staleReason(slot, now: nil) }
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
