#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging

/// A memory cache in front of a disk cache, with `String` keys: the cache most
/// apps and services want; optionally with a remote tier shared by a fleet of
/// servers (Redis, through the `StashRedis` product) behind both.
///
/// ```swift
/// let cache = try Cache<Profile>(name: "profiles", codec: .json)
/// try cache.setValue(profile, forKey: "user/42", ttl: .seconds(3_600))
/// let hit = try cache.value(forKey: "user/42")           // memory, then disk
/// let same = try await cache.value(forKey: "user/42")     // never blocks the cooperative pool
/// ```
///
/// - Reads try memory first. A disk hit is promoted into memory with the
///   cost given by the cache's cost function (by default, the size of the
///   encoded value) and the entry's remaining time to live.
/// - Writes go to both tiers (write-through), disk first. If the disk write
///   fails, the key is removed from memory too, so memory never holds a value
///   that disk does not, and the error is thrown.
/// - Removals, `removeAll()` and `contains(_:)` act on both tiers.
/// - A cache can be memory-only or disk-only: pass `nil` for the other tier to
///   ``init(memory:disk:remote:cost:loadOptions:logger:)``.
/// - With a ``RemoteCacheTier``, async reads go memory → disk → remote, writes
///   and removals go to the local tiers and then to the remote tier, and other
///   instances' changes drop keys from the local tiers (with a
///   ``RemoteCacheInvalidating`` tier). A remote failure never
///   fails a call. The synchronous API never waits for the network: it sends
///   its changes to the remote tier in the background. See `CacheCore+Remote.swift`
///   and the StashRedis article "Sharing a cache across servers".
///
/// Thread safety: every member may be called from any thread. Writes,
/// removals and promotions of one key are ordered by a striped lock, so a
/// promotion can never put an older value back into memory after a newer write.
/// Memory hits take no lock beyond the memory tier's own. Each operation has an
/// `async` form whose disk work runs on the disk tier's dispatch queue, never
/// on Swift's cooperative thread pool.
public final class Cache<Value: Sendable>: Sendable {
    /// The memory tier, or `nil` for a disk-only cache: a view for inspection,
    /// statistics, limits and trims.
    ///
    /// - Important: A write or removal made directly through `memory` skips what
    ///   `Cache` promises for its own operations: they take a per-key lock, write
    ///   disk first and memory second, and keep memory a subset of disk. Directly:
    ///   - `memory.setValue` puts a value in memory that disk does not hold (or
    ///     holds differently). `Cache` reads return it until memory evicts it or
    ///     it expires, then the disk's value, or `nil`; it never reaches disk.
    ///   - `memory.removeValue` and `memory.removeAll()` drop only the memory
    ///     copies: the next `Cache` read promotes the disk's value back.
    ///   - Neither takes the per-key lock, so it can interleave with a `Cache`
    ///     write or promotion of the same key: a direct write can be overwritten
    ///     by a promotion of the disk's (older) value read just before it.
    ///
    ///   Reading, ``MemoryCache/statistics``, changing limits and trimming are
    ///   safe: an entry trimmed from memory is read from disk again.
    public let memory: MemoryCache<String, Value>?
    /// The disk tier, or `nil` for a memory-only cache: a view for inspection,
    /// statistics, limits, trims and repair.
    ///
    /// - Important: A write or removal made directly through `disk` skips what
    ///   `Cache` promises for its own operations: they take a per-key lock,
    ///   update memory with disk, and never let a promotion put an older value
    ///   into memory after a newer write. Directly:
    ///   - `disk.setValue` and `disk.removeValue` leave memory's copy as it was:
    ///     `Cache` reads keep returning the old value (or a value disk no longer
    ///     holds) until memory evicts it or it expires.
    ///   - They do not take the per-key lock, so a `Cache` read that found the key
    ///     on disk just before a direct write can promote the older value into
    ///     memory after it: memory then serves the older value.
    ///   - `disk.removeAll()` empties disk only; memory goes on serving its copies.
    ///
    ///   Reading, ``DiskCache/statistics``, `usage()`,
    ///   `verify()`, changing limits and trimming are safe: an entry
    ///   trimmed from disk while memory holds it is served from memory until
    ///   memory evicts it, as for any disk eviction.
    public let disk: DiskCache<Value>?
    /// The options of get-or-load calls that pass none. Set by the
    /// initialiser; defaults to `LoadOptions()` (no expiry, no refresh ahead,
    /// no stale values, no timeout, no cached errors). A call's `options`
    /// replace them as a whole (see ``LoadOptions``). Thread-safe to read.
    public let loadOptions: LoadOptions
    /// `loadOptions.refreshAfter` in nanoseconds (`Int64.max` for none), read on
    /// every get-or-load hit without copying the options.
    @usableFromInline let defaultRefreshAfter: Int64
    /// Whether a disk or remote tier is behind memory: without one, a memory miss is the
    /// answer, with no call into the engine (a memory-only `HTTPCache` misses twice per request).
    @usableFromInline let hasTiersBelowMemory: Bool
    /// The engine: the tiers' per-key locks, loads, background work and remote link, and every
    /// rule that keeps the tiers consistent. The facade's members forward to it; a memory hit is
    /// answered here, through ``memory``, before it.
    @usableFromInline let core: CacheCore<Value>

    /// Combines up to three tiers, any of which may be `nil` (but not all).
    ///
    /// ```swift
    /// let cache = try Cache(memory: MemoryCache(), disk: nil, remote: redisTier)
    /// ```
    ///
    /// With a ``RemoteCacheInvalidating`` remote tier, the cache subscribes to its invalidations at once, in
    /// the background, retrying until the tier accepts (see
    /// ``waitUntilReceivingInvalidations()``), and stops when the cache is released.
    ///
    /// - Parameters:
    ///   - memory: The memory tier, or `nil`.
    ///   - disk: The disk tier, or `nil`.
    ///   - remote: A tier shared with other processes, such as StashRedis's
    ///     `RedisCacheTier`; one tier per cache. Defaults to `nil`.
    ///   - cost: The memory cost of a value, given the value and its encoded
    ///     size in bytes (`nil` without a disk tier). Defaults to the encoded
    ///     size, or 0 when there is none.
    ///   - loadOptions: The options of get-or-load calls that pass none.
    ///     Defaults to `LoadOptions()`: a plain cache's behaviour.
    ///   - logger: Where remote outages and failed loads are reported. Defaults
    ///     to a logger labelled `Stash.Cache`.
    /// - Throws: ``StashError/Code/invalidArgument`` when every tier is `nil`.
    /// - Complexity: O(1).
    public init(
        memory: MemoryCache<String, Value>?,
        disk: DiskCache<Value>?,
        remote: (any RemoteCacheTier<Value>)? = nil,
        cost: @escaping @Sendable (_ value: Value, _ encodedSize: Int?) -> Int = { _, size in size ?? 0 },
        loadOptions: LoadOptions = LoadOptions(),
        logger: Logger = Logger(label: "Stash.Cache")
    ) throws(StashError) {
        guard memory != nil || disk != nil || remote != nil else {
            throw StashError(.invalidArgument, "a cache needs a memory tier, a disk tier, a remote tier, or several")
        }
        self.memory = memory
        self.disk = disk
        self.loadOptions = loadOptions
        defaultRefreshAfter = loadOptions.refreshAfter?.nanosecondsClamped ?? .max
        hasTiersBelowMemory = disk != nil || remote != nil
        core = CacheCore(memory: memory, disk: disk, remote: remote, cost: cost, loadOptions: loadOptions, logger: logger)
        core.startReceivingInvalidations()
    }

    deinit {
        core.remoteLink?.stop()
    }

    /// Opens a cache whose disk tier lives in `directory`, with a default memory tier
    /// (S3-FIFO, the default ``EvictionPolicy``; bounded only by memory pressure unless
    /// `memoryCountLimit` or `memoryCostLimit` is given) in front.
    ///
    /// - Parameters:
    ///   - directory: The disk tier's directory, created if missing.
    ///   - codec: How values become bytes.
    ///   - memoryCountLimit: The memory tier's ``MemoryCache/countLimit``. Defaults to `Int.max`.
    ///   - memoryCostLimit: The memory tier's ``MemoryCache/costLimit``, in encoded bytes by
    ///     default. Defaults to `Int.max`.
    ///   - diskSizeLimit: The disk tier's ``DiskCache/sizeLimit``. Defaults to `Int.max`.
    ///   - remote: A tier shared with other processes, behind the disk tier; use
    ///     the same codec for it. Defaults to `nil`. See ``init(memory:disk:remote:cost:loadOptions:logger:)``.
    ///   - logger: Shared by every tier. Defaults to a logger labelled `Stash.Cache`.
    /// - Throws: ``StashError``, as ``DiskCache``'s initialiser.
    /// - Complexity: O(1) in the number of entries. Blocks on disk I/O.
    public convenience init(
        directory: String,
        codec: DiskCodec<Value>,
        memoryCountLimit: Int = .max,
        memoryCostLimit: Int = .max,
        diskSizeLimit: Int = .max,
        remote: (any RemoteCacheTier<Value>)? = nil,
        logger: Logger = Logger(label: "Stash.Cache")
    ) throws(StashError) {
        let disk = try DiskCache<Value>(
            directory: directory, codec: codec,
            configuration: DiskCacheConfiguration(sizeLimit: diskSizeLimit, logger: logger))
        let memory = MemoryCache<String, Value>(configuration: .init(
            label: directory, countLimit: memoryCountLimit, costLimit: memoryCostLimit, logger: logger))
        try self.init(memory: memory, disk: disk, remote: remote, logger: logger)
    }

    /// Opens the cache called `name` in the platform's caches directory:
    /// `Library/Caches/<name>` on Apple platforms; `$XDG_CACHE_HOME/<name>`,
    /// or `~/.cache/<name>`, on Linux.
    ///
    /// - Parameters:
    ///   - name: A single path component naming the cache.
    ///   - codec: How values become bytes.
    ///   - memoryCountLimit: The memory tier's ``MemoryCache/countLimit``. Defaults to `Int.max`.
    ///   - memoryCostLimit: The memory tier's ``MemoryCache/costLimit``. Defaults to `Int.max`.
    ///   - diskSizeLimit: The disk tier's ``DiskCache/sizeLimit``. Defaults to `Int.max`.
    ///   - remote: A tier shared with other processes. Defaults to `nil`.
    ///   - logger: Shared by every tier. Defaults to a logger labelled `Stash.Cache`.
    /// - Throws: ``StashError/Code/invalidArgument`` for a name that is not a
    ///   single path component, ``StashError/Code/directoryUnusable`` when there
    ///   is no caches directory, or as ``DiskCache``'s initialiser.
    /// - Complexity: O(1) in the number of entries. Blocks on disk I/O.
    public convenience init(
        name: String,
        codec: DiskCodec<Value>,
        memoryCountLimit: Int = .max,
        memoryCostLimit: Int = .max,
        diskSizeLimit: Int = .max,
        remote: (any RemoteCacheTier<Value>)? = nil,
        logger: Logger = Logger(label: "Stash.Cache")
    ) throws(StashError) {
        try self.init(
            directory: try CachesDirectory.path(forName: name), codec: codec, memoryCountLimit: memoryCountLimit,
            memoryCostLimit: memoryCostLimit, diskSizeLimit: diskSizeLimit, remote: remote, logger: logger)
    }

    // MARK: - Statistics

    /// The cache's lookup counters, derived from its tiers' own (no counter or
    /// lock of its own): hits are memory hits plus disk hits; misses are lookups
    /// that missed both tiers (the disk tier's misses, or memory's for a
    /// memory-only cache); evictions are both tiers' evictions added up, by
    /// reason too.
    ///
    /// Lookups made directly through ``memory`` or ``disk`` count too.
    ///
    /// - Complexity: O(1). Never blocks on disk I/O. Thread-safe.
    public var statistics: CacheStatistics {
        core.statistics
    }

    // MARK: - Reading

    /// The value for `key`: from memory, else from disk (then promoted into
    /// memory), else `nil`. Never reads the remote tier (the `async` form does).
    ///
    /// - Throws: ``StashError`` from the disk tier: an empty key, or a disk failure.
    /// - Complexity: O(1) on a memory hit; one indexed `SELECT` otherwise.
    ///   Blocks on disk I/O on a memory miss. Thread-safe.
    // Inlinable, so that a memory hit is specialised for the caller's `Value`
    // (unspecialised, the generic code looks up type metadata at every call: the cost is in
    // docs/benchmarks.md, "Get-or-load (issue #16)", *History*).
    @inlinable
    public func value(forKey key: String) throws(StashError) -> Value? {
        if let hit = memory?.value(forKey: key) {
            return hit
        }
        return try core.valueBelowMemory(forKey: key, writingMemory: writeMemory)
    }

    /// The memory write of a disk hit's promotion, handed to the engine by the inlinable reads so
    /// that it is specialised for the caller's `Value` (see `CacheCore.MemoryWrite`).
    @inlinable
    func writeMemory(_ value: Value, forKey key: String, cost: Int, ttl: Duration?) {
        memory?.setValue(value, forKey: key, cost: cost, ttl: ttl)
    }

    /// Whether either local tier holds a fresh value for `key`. Changes no
    /// recency. Never asks the remote tier (the `async` form does).
    ///
    /// - Throws: ``StashError`` from the disk tier.
    /// - Complexity: O(1) when memory holds it; one indexed `SELECT` otherwise. Thread-safe.
    public func contains(_ key: String) throws(StashError) -> Bool {
        try core.contains(key)
    }

    // MARK: - Writing

    /// Stores `value` in both tiers: disk first, then memory. With a remote
    /// tier, the change is sent there in the background, after every earlier
    /// change of `key` (the `async` form waits for it). At most 10,000 such
    /// changes are in flight at a time: past that (a remote tier slower than
    /// the writes), the change is not sent and its key is marked stale instead,
    /// as after a failed send: no read takes it from the remote tier, and it is
    /// removed there (telling the other instances) once the tier keeps up.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: Any non-empty string.
    ///   - ttl: How long the entry lives, in every tier. Defaults to `nil`.
    /// - Throws: ``StashError`` from the disk tier (an empty key, an encoding
    ///   failure, a value over the size limit, a disk failure). Memory then no
    ///   longer holds `key`, so it stays consistent with disk; nothing is sent
    ///   to the remote tier.
    /// - Complexity: O(1) for memory plus one disk transaction. Blocks on disk I/O. Thread-safe.
    // Inlinable, so that the memory write is specialised for the caller's `Value` (see
    // `CacheCore.MemoryWrite`).
    @inlinable
    public func setValue(_ value: Value, forKey key: String, ttl: Duration? = nil) throws(StashError) {
        try core.setValue(value, forKey: key, ttl: ttl, writingMemory: writeMemory)
    }

    /// Removes `key` from both tiers. With a remote tier, the removal is sent
    /// there in the background, after every earlier change of `key`.
    ///
    /// - Returns: Whether either local tier held a value.
    /// - Throws: ``StashError`` from the disk tier. Memory no longer holds `key`
    ///   either way, and the removal is sent to the remote tier either way.
    /// - Complexity: O(1) for memory plus one disk transaction. Thread-safe.
    @discardableResult
    public func removeValue(forKey key: String) throws(StashError) -> Bool {
        try core.removeValue(forKey: key)
    }

    /// Removes every entry from both tiers. With a remote tier, its namespace
    /// is emptied in the background.
    ///
    /// - Throws: ``StashError`` from the disk tier. Memory is emptied either way.
    /// - Complexity: O(1) for memory; see `DiskCache/removeAll()`. Thread-safe.
    public func removeAll() throws(StashError) {
        try removeAll(progress: { _, _ in })
    }

    /// Removes every entry from both tiers, reporting the disk tier's progress.
    /// With a remote tier, its namespace is emptied in the background.
    ///
    /// - Parameter progress: See `DiskCache/removeAll(progress:)`.
    /// - Throws: ``StashError`` from the disk tier. Memory is emptied either way.
    public func removeAll(progress: (_ removed: Int, _ total: Int) -> Void) throws(StashError) {
        try core.removeAll(progress: progress)
    }
}

extension Cache where Value == Data {
    /// Opens a cache of raw bytes whose disk tier lives in `directory`. See
    /// ``init(directory:codec:memoryCountLimit:memoryCostLimit:diskSizeLimit:remote:logger:)``.
    ///
    /// - Throws: ``StashError``, as ``DiskCache``'s initialiser.
    public convenience init(
        directory: String,
        memoryCountLimit: Int = .max,
        memoryCostLimit: Int = .max,
        diskSizeLimit: Int = .max,
        remote: (any RemoteCacheTier<Data>)? = nil,
        logger: Logger = Logger(label: "Stash.Cache")
    ) throws(StashError) {
        try self.init(
            directory: directory, codec: .data, memoryCountLimit: memoryCountLimit, memoryCostLimit: memoryCostLimit,
            diskSizeLimit: diskSizeLimit, remote: remote, logger: logger)
    }

    /// Opens the cache of raw bytes called `name` in the platform's caches
    /// directory. See ``init(name:codec:memoryCountLimit:memoryCostLimit:diskSizeLimit:remote:logger:)``.
    ///
    /// - Throws: ``StashError``, as the initialiser it forwards to.
    public convenience init(
        name: String,
        memoryCountLimit: Int = .max,
        memoryCostLimit: Int = .max,
        diskSizeLimit: Int = .max,
        remote: (any RemoteCacheTier<Data>)? = nil,
        logger: Logger = Logger(label: "Stash.Cache")
    ) throws(StashError) {
        try self.init(
            name: name, codec: .data, memoryCountLimit: memoryCountLimit, memoryCostLimit: memoryCostLimit,
            diskSizeLimit: diskSizeLimit, remote: remote, logger: logger)
    }
}
