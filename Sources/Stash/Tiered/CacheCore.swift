#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging

/// The engine of ``Cache``: its tiers, the per-key locks that order their changes, the loads,
/// the background work and the remote link, and every rule that keeps the tiers consistent.
/// ``Cache`` is a facade over it (as ``MemoryCache`` is over `MemoryCacheCore` and ``DiskCache``
/// over `DiskCacheCore`); its members forward here, but for a memory hit, which it answers itself.
///
/// This file has the state and the local reads and writes; the other `CacheCore+` files hold
/// the async forms, the remote tier, loading, fleet loads, insertions and shutdown.
///
/// Thread-safety: as ``Cache``: every member may be called from any thread. Writes, removals and
/// promotions of one key are ordered by ``stripes``; the other state is immutable or behind its
/// own lock.
@usableFromInline
final class CacheCore<Value: Sendable>: Sendable {
    /// The memory tier, or `nil`: the same as ``Cache/memory``.
    let memory: MemoryCache<String, Value>?
    /// The disk tier, or `nil`: the same as ``Cache/disk``.
    let disk: DiskCache<Value>?
    /// The cost of a value promoted or written into memory, given the value and
    /// its encoded size in bytes (nil when there is no disk tier to encode for).
    let cost: @Sendable (Value, Int?) -> Int
    /// Orders writes, removals and promotions of the same key.
    let stripes: KeyStripes
    /// The options of get-or-load calls that pass none: the same as ``Cache/loadOptions``.
    let loadOptions: LoadOptions
    /// Runs get-or-load calls.
    let loading: LoadingEngine<String, Value>
    /// The ticket of each load under way (see ``LoadingTarget``), changed
    /// only under the key's stripe lock.
    let loadTickets = LockedValue(LoadTickets<String>())
    /// The remote tier and what the cache keeps about it, or `nil` for a local cache.
    let remoteLink: RemoteTierLink<Value>?
    /// The work that outlives the calls that asked for it (changes on their way to the remote
    /// tier, invalidations applied to the disk tier), for ``close(timeout:)`` to wait for.
    let background: BackgroundTasks
    /// The tiers' clock, for ``close(timeout:)``'s bound.
    let clock: any CacheClock
    /// Where shutdown is reported.
    let logger: Logger

    /// A core over the given tiers (at least one, checked by ``Cache``); see
    /// ``Cache/init(memory:disk:remote:cost:loadOptions:logger:)``.
    init(
        memory: MemoryCache<String, Value>?, disk: DiskCache<Value>?, remote: (any RemoteCacheTier<Value>)?,
        cost: @escaping @Sendable (Value, Int?) -> Int, loadOptions: LoadOptions, logger: Logger
    ) {
        self.memory = memory
        self.disk = disk
        self.cost = cost
        self.loadOptions = loadOptions
        stripes = KeyStripes()
        let clock: any CacheClock = memory?.clock ?? disk?.clock ?? SystemClock()
        self.clock = clock
        self.logger = logger
        let background = BackgroundTasks()
        self.background = background
        loading = LoadingEngine(clock: clock, logger: logger, background: background)
        remoteLink = remote.map { RemoteTierLink(tier: $0, clock: clock, logger: logger, background: background) }
    }

    // MARK: - Statistics

    /// See ``Cache/statistics``.
    var statistics: CacheStatistics {
        var statistics: CacheStatistics
        switch (memory?.statistics, disk?.statistics) {
        case let (memory?, disk?):
            statistics = CacheStatistics(hits: memory.hits + disk.hits, misses: disk.misses)
                .addingEvictions(of: memory).addingEvictions(of: disk)
        case let (memory?, nil):
            statistics = memory
        case let (nil, disk?):
            statistics = disk
        case (nil, nil):
            statistics = CacheStatistics()
        }
        loading.addCounters(to: &statistics)
        return statistics
    }

    // MARK: - Reading

    /// The memory write of a promotion: `(value, key, cost, ttl)`.
    ///
    /// The facade's inlinable reads pass a closure that calls ``MemoryCache/setValue(_:forKey:cost:ttl:)``,
    /// so that the write is specialised for the caller's `Value`: called from this generic engine,
    /// the memory tier's code looks up type metadata at every step (the cost: docs/benchmarks.md,
    /// "The store on `Cache`").
    @usableFromInline
    typealias MemoryWrite = (Value, String, Int, Duration?) -> Void

    /// `value(forKey:)` after a memory miss: from disk, promoted into memory.
    func valueBelowMemory(forKey key: String) throws(StashError) -> Value? {
        try valueBelowMemory(forKey: key, writingMemory: writeMemory)
    }

    /// The memory write of a promotion, unspecialised: for the engine's own reads.
    func writeMemory(_ value: Value, forKey key: String, cost: Int, ttl: Duration?) {
        memory?.setValue(value, forKey: key, cost: cost, ttl: ttl)
    }

    /// `value(forKey:)` after a memory miss: from disk, promoted into memory with `writeMemory`.
    @usableFromInline
    func valueBelowMemory(forKey key: String, writingMemory writeMemory: MemoryWrite) throws(StashError) -> Value? {
        guard let disk else { return nil }
        // Not while an invalidation of the key is under way: its disk copy is the old value.
        return try stripes.withLockUnlessInvalidating(for: key) { () throws(StashError) -> Value? in
            // Another thread may have promoted or written the key while this one waited. The
            // caller has counted its memory miss already.
            if let hit = memory?.uncountedValue(forKey: key) {
                return hit
            }
            guard let found = try disk.valueWithMetadata(forKey: key) else { return nil }
            promote(found.value, forKey: key, encodedSize: found.size, expiration: found.expiration, writingMemory: writeMemory)
            return found.value
        }
    }

    /// See ``Cache/contains(_:)``.
    func contains(_ key: String) throws(StashError) -> Bool {
        if memory?.contains(key) == true { return true }
        return try disk?.contains(key) ?? false
    }

    // MARK: - Writing

    /// See ``Cache/setValue(_:forKey:ttl:)``; memory written with `writeMemory` (see ``MemoryWrite``).
    @usableFromInline
    func setValue(_ value: Value, forKey key: String, ttl: Duration?, writingMemory writeMemory: MemoryWrite) throws(StashError) {
        let ticket = try setLocalValue(value, forKey: key, ttl: ttl, writingMemory: writeMemory)
        if let ticket { remoteLink?.sendInBackground(.set(value, ttl: ttl), ticket: ticket) }
    }

    /// Writes the local tiers under `key`'s stripe lock and, with a remote tier,
    /// takes the change's place in the order of `key`'s remote changes.
    func setLocalValue(_ value: Value, forKey key: String, ttl: Duration?) throws(StashError) -> RemoteWriteOrder.Ticket? {
        try setLocalValue(value, forKey: key, ttl: ttl, writingMemory: writeMemory)
    }

    /// ``setLocalValue(_:forKey:ttl:)`` writing memory with `writeMemory` (see ``MemoryWrite``).
    func setLocalValue(
        _ value: Value, forKey key: String, ttl: Duration?, writingMemory writeMemory: MemoryWrite
    ) throws(StashError) -> RemoteWriteOrder.Ticket? {
        try stripes.withChange(for: key) { () throws(StashError) -> RemoteWriteOrder.Ticket? in
            loadTickets.withLock { $0.void(key) }
            try _writeLocal(value, forKey: key, ttl: ttl, grace: nil, writingMemory: writeMemory)
            return remoteLink?.order.enqueue(key)
        }
    }

    /// Writes disk, then memory (with a fail-safe `grace` for loaded values);
    /// if the disk write fails, removes memory's copy and throws. Expects the
    /// key's stripe lock held.
    func _writeLocal(_ value: Value, forKey key: String, ttl: Duration?, grace: Duration?) throws(StashError) {
        try _writeLocal(value, forKey: key, ttl: ttl, grace: grace, writingMemory: writeMemory)
    }

    /// ``_writeLocal(_:forKey:ttl:grace:)``, a write without `grace` made with `writeMemory`.
    func _writeLocal(
        _ value: Value, forKey key: String, ttl: Duration?, grace: Duration?, writingMemory writeMemory: MemoryWrite
    ) throws(StashError) {
        let diskWrite: Result<Int?, StashError>
        if let disk {
            diskWrite = Result { () throws(StashError) in try disk.setValueReturningSize(value, forKey: key, ttl: ttl) }
                .map(Optional.some)
        } else {
            diskWrite = Self.keyCheckWithoutDisk(key)
        }
        try finishLocalWrite(value, forKey: key, ttl: ttl, grace: grace, diskWrite: diskWrite, writingMemory: writeMemory)
    }

    /// What stands for the disk write without a disk tier: the key check it would make, so that a
    /// memory-only cache refuses the keys a disk tier refuses.
    static func keyCheckWithoutDisk(_ key: String) -> Result<Int?, StashError> {
        Result { () throws(StashError) in try DiskCache<Value>.validate(key) }.map { nil }
    }

    /// The memory half of a local write, once the disk tier answered `diskWrite` (the encoded
    /// size, `nil` without a disk tier, or its error): memory takes the value (with a fail-safe
    /// `grace` for loaded values; else through `writeMemory`), or, when the disk refused it, drops
    /// the key and the error is thrown, so memory never holds what disk does not. For single and
    /// batch writes alike. Expects the key's stripe lock held.
    func finishLocalWrite(
        _ value: Value, forKey key: String, ttl: Duration?, grace: Duration?,
        diskWrite: Result<Int?, StashError>, writingMemory writeMemory: MemoryWrite
    ) throws(StashError) {
        let encodedSize: Int?
        switch diskWrite {
        case .success(let size):
            encodedSize = size
        case .failure(let error):
            memory?.removeValue(forKey: key)
            throw error
        }
        guard memory != nil else { return }
        if let grace {
            memory?.setLoadedValue(value, forKey: key, cost: cost(value, encodedSize), ttl: ttl, grace: grace)
        } else {
            writeMemory(value, key, cost(value, encodedSize), ttl)
        }
    }

    /// See ``Cache/removeValue(forKey:)``.
    @discardableResult
    func removeValue(forKey key: String) throws(StashError) -> Bool {
        let (held, ticket) = try removeLocalValue(forKey: key)
        if let ticket { remoteLink?.sendInBackground(.remove, ticket: ticket) }
        return held
    }

    /// Removes `key` from the local tiers under its stripe lock and, with a
    /// remote tier, takes the removal's place in the order of `key`'s remote
    /// changes (also when the disk fails: memory no longer holds the key, so
    /// the shared copy must go too).
    func removeLocalValue(forKey key: String) throws(StashError) -> (held: Bool, ticket: RemoteWriteOrder.Ticket?) {
        try stripes.withChange(for: key) { () throws(StashError) -> (held: Bool, ticket: RemoteWriteOrder.Ticket?) in
            loadTickets.withLock { $0.void(key) }
            let inMemory = memory?.removeValue(forKey: key) != nil
            if remoteLink != nil, disk == nil { try DiskCache<Value>.validate(key) }
            let ticket = remoteLink?.order.enqueue(key)
            do throws(StashError) {
                let onDisk = try disk?.removeValue(forKey: key) ?? false
                return (inMemory || onDisk, ticket)
            } catch {
                if let ticket { remoteLink?.sendInBackground(.remove, ticket: ticket) }
                throw error
            }
        }
    }

    /// See ``Cache/removeAll(progress:)``.
    func removeAll(progress: (_ removed: Int, _ total: Int) -> Void) throws(StashError) {
        defer {
            if let remoteLink { background.start { await remoteLink.removeAll() } }
        }
        try removeLocalValues(progress: progress)
    }

    /// Empties the local tiers and counts it as a change of every key.
    func removeLocalValues(progress: (_ removed: Int, _ total: Int) -> Void) throws(StashError) {
        stripes.changeAll()
        loadTickets.withLock { $0.voidAll() }
        loading.forgetErrors()
        memory?.removeAll()
        try disk?.removeAll(progress: progress)
    }

    /// Puts a value read from disk into memory with `writeMemory`, with its remaining time to live.
    func promote(_ value: Value, forKey key: String, encodedSize: Int, expiration: Int64?, writingMemory writeMemory: MemoryWrite) {
        guard memory != nil, let disk else { return }
        var ttl: Duration?
        if let expiration {
            let remaining = expiration &- disk.nanosecondsNow
            guard remaining > 0 else { return }
            ttl = .nanoseconds(remaining)
        }
        writeMemory(value, key, cost(value, encodedSize), ttl)
    }
}
