import Logging

/// A thread-safe, in-memory key-value cache with strict count, cost and age
/// limits, per-entry time to live, and a choice of eviction policy.
///
/// ```swift
/// let images = MemoryCache<URL, Image>(countLimit: 500, costLimit: 64 << 20)
/// // or, for every setting: MemoryCache<URL, Image>(configuration: .init(...))
/// images.setValue(image, forKey: url, cost: image.byteCount)
/// if let hit = images.value(forKey: url) { show(hit) }
/// ```
///
/// ## Limits are strict
/// Unlike `NSCache`'s and YYCache's advisory limits, when any call returns,
/// ``count`` ≤ ``countLimit`` and ``totalCost`` ≤ ``costLimit``. Lowering a
/// limit trims at once. A value whose cost alone exceeds ``costLimit`` is not
/// stored, and any older value for its key is removed. An entry older than
/// ``ageLimit``, or past its own time to live, is never returned, even before
/// any trim has run.
///
/// ## Invalid limits
/// A negative ``countLimit``, ``costLimit`` or ``ageLimit``, given at
/// initialisation or set later, is clamped to 0 and logged once as a warning
/// to the configured logger; nothing throws or traps. A negative cost counts
/// as 0, and a zero or negative time to live stores nothing.
///
/// ## Performance
/// A hash index over an arena of entries plus a linked eviction queue: every
/// read, write and removal is O(1), with no allocation per operation once the
/// cache has grown. Keys are hashed before the lock is taken.
///
/// ## Thread safety
/// Every member may be called from any thread. Writes, removals and every
/// other change are serialised by one internal policy lock and may block while
/// another thread holds it (for O(1) work, or a bounded batch during a sweep).
/// With the default ``EvictionPolicy/s3FIFO`` (and ``EvictionPolicy/fifo``),
/// ``value(forKey:)`` takes only one of 64 index stripe locks, picked by the
/// key's hash, so reads of different keys proceed in parallel with each other
/// and with writes; the limits stay exact and strict all the same (see
/// "Caching in Memory"). ``onEvict`` runs, and evicted values are released,
/// after every lock is released, so both may call back into the cache.
///
/// ## Expiry
/// Times come from the ``CacheClock`` given at initialisation, by default the
/// monotonic ``SystemClock``. An entry's age counts from its last write;
/// reads don't renew it.
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    @usableFromInline
    let core: MemoryCacheCore<Key, Value>
    /// The monitor this cache listens to, for ``close()``.
    private let memoryPressureMonitor: MemoryPressureMonitor

    /// Creates an empty cache with every setting from `configuration`.
    ///
    /// Negative limits are clamped to 0, and a zero or negative auto-trim
    /// interval turns the sweep off, each with one warning to the
    /// configuration's logger: the initialiser never throws or traps.
    ///
    /// - Parameter configuration: The limits, policy, background behaviour,
    ///   clock and logger. See ``Configuration`` for each default.
    /// - Complexity: O(1). Does not block.
    public convenience init(configuration: Configuration) {
        self.init(configuration: configuration, memoryPressureMonitor: .shared)
    }

    /// Creates an empty cache with the given limits and policy, and every
    /// other setting at its default (see ``Configuration``).
    ///
    /// ```swift
    /// let thumbnails = MemoryCache<URL, Image>(countLimit: 500)
    /// ```
    ///
    /// - Parameters:
    ///   - countLimit: The most entries the cache holds. Strict. Defaults to `Int.max`: no limit.
    ///     A negative value is logged and treated as 0.
    ///   - costLimit: The most total cost the cache holds. Strict. Defaults to `Int.max`: no limit.
    ///     A negative value is logged and treated as 0.
    ///   - ageLimit: How long after its last write an entry expires. Strict. Defaults to `nil`: never.
    ///     A negative value is logged and treated as 0.
    ///   - policy: Which entry goes first when a limit is reached. Defaults to ``EvictionPolicy/s3FIFO``.
    /// - Complexity: O(1). Does not block.
    public convenience init(
        countLimit: Int = .max, costLimit: Int = .max, ageLimit: Duration? = nil, policy: EvictionPolicy = .s3FIFO
    ) {
        self.init(configuration: Configuration(
            countLimit: countLimit, costLimit: costLimit, ageLimit: ageLimit, policy: policy))
    }

    /// Creates a cache that listens to `memoryPressureMonitor`: for tests, which
    /// inject a monitor they drive themselves, and in debug builds check the
    /// engine's invariants after every mutation when `checksInvariants` is set.
    init(
        configuration: Configuration, memoryPressureMonitor: MemoryPressureMonitor, checksInvariants: Bool = false
    ) {
        core = MemoryCacheCore(configuration: configuration)
        #if DEBUG
        core._checksInvariants = checksInvariants
        #endif
        self.memoryPressureMonitor = memoryPressureMonitor
        memoryPressureMonitor.addObserver(core)
    }

    /// Stops the cache's background work: the auto-trim sweep (``autoTrimInterval`` becomes
    /// `nil`) and listening for memory pressure. What a server calls on shutdown; in a
    /// swift-service-lifecycle `ServiceGroup` the cache calls it itself on graceful shutdown.
    ///
    /// The cache keeps working afterwards: reads, writes and the limits, which every write
    /// enforces, are unchanged; expired entries go when they are read or evicted. Nothing needs
    /// writing: the cache holds no resource but memory. Calling it again does nothing more.
    ///
    /// - Complexity: O(caches listening to memory pressure). Thread-safe; does not block.
    public func close() {
        core.autoTrimInterval = nil
        memoryPressureMonitor.removeObserver(core)
    }

    /// The label given at initialisation, for logs.
    ///
    /// - Complexity: O(1). Thread-safe.
    public var label: String { core.label }

    // MARK: - Reading

    /// The value stored for `key`, or `nil` if there is none, or if it has
    /// expired or its content was discarded (it is then evicted).
    ///
    /// A hit records a use for the eviction policy: S3-FIFO (the default) bumps the
    /// entry's small use counter, LRU makes it the most recent, LFU counts it; FIFO
    /// records nothing.
    ///
    /// - Complexity: O(1). Thread-safe. With ``EvictionPolicy/s3FIFO`` (the
    ///   default) or ``EvictionPolicy/fifo``, takes only the key's stripe lock,
    ///   and blocks only while another thread reads a key of the same stripe or
    ///   a writer changes an entry of it; an expired or discarded entry, and the
    ///   other policies, take the policy lock and may block while a writer holds it.
    @inlinable
    public func value(forKey key: Key) -> Value? {
        core.value(forKey: key)
    }

    /// Looks `key` up for a get-or-load (see `MemoryCacheCore.loadLookup(forKey:refreshAfter:)`).
    @inlinable
    func loadLookup(forKey key: Key, refreshAfter: Int64) -> LoadLookup<Value> {
        core.loadLookup(forKey: key, refreshAfter: refreshAfter)
    }

    /// ``value(forKey:)`` without counting a hit or a miss in ``statistics``: for a tier in
    /// front of which a caller has already counted its miss (`Cache` looks again under a key's
    /// lock before reading disk).
    func uncountedValue(forKey key: Key) -> Value? {
        core.uncountedValue(forKey: key)
    }

    /// The fresh value of `key`, without counting or changing recency: for a get-or-load that
    /// looks again before it loads (see `MemoryCacheCore.freshValue(forKey:)`).
    func freshValue(forKey key: Key) -> Value? {
        core.freshValue(forKey: key)
    }

    /// Stores a loaded value with its fail-safe `grace` (see
    /// `MemoryCacheCore.setLoadedValue(_:forKey:cost:ttl:grace:)`).
    func setLoadedValue(_ value: Value, forKey key: Key, cost: Int, ttl: Duration?, grace: Duration?) {
        core.setLoadedValue(value, forKey: key, cost: cost, ttl: ttl, grace: grace)
    }

    /// The clock the cache reads for ages and expiry (``Configuration/clock``).
    var clock: any CacheClock { core.table.clock }

    /// Whether the cache holds a fresh value for `key`.
    ///
    /// Unlike ``value(forKey:)`` it does not change recency or frequency, and it
    /// is not counted as a hit or a miss.
    ///
    /// - Complexity: O(1). Thread-safe.
    @inlinable
    public func contains(_ key: Key) -> Bool {
        core.contains(key)
    }

    // MARK: - Writing

    /// Stores `value` for `key`, replacing any value already there, then evicts
    /// entries in policy order until the limits hold again.
    ///
    /// The value is not stored (and any older value for `key` is removed) when
    /// `cost` exceeds ``costLimit``, when ``countLimit`` is 0, or when `ttl` is
    /// zero or negative. ``onEvict`` then receives the rejected value with reason
    /// ``EvictionReason/costLimit``, ``EvictionReason/countLimit`` or
    /// ``EvictionReason/expired``.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: The key to store it under.
    ///   - cost: What the entry counts against ``costLimit``, such as its size
    ///     in bytes. Defaults to 0. A negative cost counts as 0.
    ///   - ttl: How long the entry lives from now, on top of ``ageLimit``.
    ///     Defaults to `nil`: only ``ageLimit`` applies.
    /// - Complexity: O(1) amortised, plus O(1) for each entry evicted.
    ///   Thread-safe; blocks only while another thread holds the lock.
    @inlinable
    public func setValue(_ value: Value, forKey key: Key, cost: Int = 0, ttl: Duration? = nil) {
        core.setValue(value, forKey: key, cost: cost, ttl: ttl)
    }

    /// Removes the value for `key`.
    ///
    /// ``onEvict`` receives it with reason ``EvictionReason/removed``.
    ///
    /// - Returns: The removed value, or `nil` if there was none (or it had expired).
    /// - Complexity: O(1). Thread-safe.
    @inlinable
    @discardableResult
    public func removeValue(forKey key: Key) -> Value? {
        core.removeValue(forKey: key)
    }

    /// Removes every entry.
    ///
    /// The cache is emptied in O(1) under the lock; ``onEvict`` then receives
    /// each entry with reason ``EvictionReason/removeAll``, and the values are
    /// released outside the lock (in the background when there are many and
    /// ``releasesValuesInBackground`` is set).
    ///
    /// - Complexity: O(1) under the lock; O(n) in all. Thread-safe.
    public func removeAll() {
        core.removeAll(reason: .removeAll)
    }

    /// The value for `key`: reading is ``value(forKey:)``, assigning is
    /// ``setValue(_:forKey:cost:ttl:)`` with cost 0 and no time to live, and
    /// assigning `nil` is ``removeValue(forKey:)``.
    ///
    /// - Complexity: O(1). Thread-safe.
    @inlinable
    public subscript(key: Key) -> Value? {
        get { value(forKey: key) }
        set {
            if let newValue {
                setValue(newValue, forKey: key)
            } else {
                removeValue(forKey: key)
            }
        }
    }

    // MARK: - Size

    /// The number of entries, including any expired ones not yet swept.
    ///
    /// - Complexity: O(1). Thread-safe.
    public var count: Int {
        core.count
    }

    /// The sum of the costs of all entries.
    ///
    /// - Complexity: O(1). Thread-safe.
    public var totalCost: Int {
        core.totalCost
    }

    // MARK: - Events

    /// Called for every entry that leaves the cache, with its key, its value
    /// and the reason. Defaults to `nil`.
    ///
    /// Runs on the thread whose call removed the entry (the background sweep's
    /// queue for expiry found by auto-trim), after the cache's lock is released:
    /// it may call back into the cache. Calls from different threads are not
    /// ordered with respect to each other.
    ///
    /// - Complexity: Setting it is O(1) and thread-safe.
    public var onEvict: (@Sendable (Key, Value, EvictionReason) -> Void)? {
        get { core.onEvict }
        set { core.onEvict = newValue }
    }

    /// Whether large batches of evicted values are released on a background
    /// queue. Defaults to `true`. See ``Configuration/releasesValuesInBackground``.
    ///
    /// - Complexity: O(1). Thread-safe.
    public var releasesValuesInBackground: Bool {
        get { core.releasesValuesInBackground }
        set { core.releasesValuesInBackground = newValue }
    }
}
