#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import Logging

/// The thread-safe heart of ``DiskCache``: a ``KVStorage`` behind a lock, the
/// codec, the limits, the lookup counters, and the background work (trimming,
/// emptying the trash, the start-up consistency check).
///
/// The only owner of its lock and its state: ``DiskCache`` calls its methods and
/// never touches either. Methods whose name starts with `_` assume the lock is
/// held. Encoding and decoding run outside the lock; only storage calls run
/// under it. Writes go through ``GroupCommit``: the writes that queue while a
/// commit is in flight are stored by the next one, in one transaction. Reads go
/// first through the storage's ``ManifestReaderPool``, without the lock (see
/// ``freshItem(forKey:)``).
final class DiskCacheCore<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `storage` and every `var` below are private and only
    // touched with `lock` held, but `hits` and `misses` (with `readLock` held) and
    // `ageLimit` (written with both held, read with either); the `let`s are
    // immutable and Sendable (`readers` and `accessLog` are thread-safe; KVStorage
    // itself is not, which is why it never escapes the lock). The background
    // consistency check opens no storage of its own here: it goes through
    // KVStorage.checkConsistency(ofDirectory:...), which opens, uses and closes
    // one on the maintenance thread.

    private let lock = Lock()
    /// Held for the whole background consistency check, and by `close()` before it
    /// closes the storage, so that no check still uses the directory once `close()`
    /// has returned. Never taken by reads or writes. Lock order: `checkLock`, then
    /// `lock`.
    private let checkLock = Lock()
    private let storage: KVStorage
    /// Where writers queue while a commit is in flight, to share the next one.
    private let writes = GroupCommit<PendingWrite, StashError?>()
    private let codec: DiskCodec<Value>
    let logger: Logger
    let clock: any CacheClock
    /// The cache's directory, as the storage normalised it.
    let directory: String
    /// Runs the async API's blocking work, never on Swift's cooperative thread pool.
    private let ioQueue: DispatchQueue
    /// Runs the background jobs, so that they never queue in front of callers.
    private let maintenanceQueue: DispatchQueue

    /// Guards ``hits`` and ``misses``, and ``ageLimit`` with `lock`: the reads that
    /// ``readers`` serve take this lock, never `lock`. Held for a few arithmetic
    /// operations. Lock order: `lock`, then `readLock`.
    private let readLock = Lock()
    /// Read-only connections for reads that run beside writes and each other
    /// (issue #26); the storage retires them whenever its own connection changes.
    private let readers: ManifestReaderPool
    /// The storage's pending access times, which those reads add to.
    private let accessLog: AccessLog
    /// How many access times may pend before a read flushes them.
    private let accessFlushThreshold: Int

    private var countLimit: Int
    private var sizeLimit: Int
    /// Nanoseconds, or `Int64.max` for no limit. Written with both `lock` and
    /// `readLock` held; read with either.
    private var ageLimit: Int64
    private var freeDiskSpaceLimit: Int
    private var autoTrimTimer = AutoTrimTimer()
    /// Lookups that returned a value and lookups that did not. Under `readLock`.
    private var hits = 0
    private var misses = 0
    /// Entries removed by a trim, a limit or expiry (reads that find an entry
    /// expired are counted by the storage: ``KVStorage/expiredOnRead``).
    private var evictions = EvictionCounts()
    /// A test hook: called by the background consistency check on the maintenance
    /// queue, without the cache's lock, once it has listed `data/` and before its
    /// write transaction. `nil` (the default) outside tests.
    private var consistencyCheckAfterListing: (@Sendable () -> Void)?

    /// Opens the storage in `directory` with `configuration`, clamping negative
    /// limits to 0 with a warning, and starts the background work.
    init(directory: String, codec: DiskCodec<Value>, configuration: DiskCacheConfiguration) throws(StashError) {
        let logger = configuration.logger
        func clamped(_ value: Int, _ name: String) -> Int {
            Self.clamped(value, name, logger: logger)
        }
        var age = configuration.ageLimit?.nanosecondsClamped ?? .max
        if age < 0 {
            logger.warning("ageLimit must not be negative (got \(configuration.ageLimit!)); using 0")
            age = 0
        }
        storage = try KVStorage(
            directory: directory, kind: configuration.storage, clock: configuration.clock, logger: logger)
        self.directory = storage.directory
        readers = storage.readers
        accessLog = storage.accessLog
        accessFlushThreshold = storage.options.accessFlushThreshold
        self.codec = codec
        countLimit = clamped(configuration.countLimit, "countLimit")
        sizeLimit = clamped(configuration.sizeLimit, "sizeLimit")
        ageLimit = age
        freeDiskSpaceLimit = clamped(configuration.freeDiskSpaceLimit, "freeDiskSpaceLimit")
        clock = configuration.clock
        self.logger = logger
        ioQueue = DispatchQueue(label: "Stash.DiskCache.io")
        maintenanceQueue = DispatchQueue(label: "Stash.DiskCache.maintenance", qos: .utility)
        setAutoTrimInterval(configuration.autoTrimInterval)
        scheduleConsistencyCheck()
    }

    deinit {
        autoTrimTimer.cancel()
        storage.close()
    }

    /// `value`, or 0 with a warning if it is negative: the policy for every
    /// negative limit.
    private static func clamped(_ value: Int, _ name: String, logger: Logger) -> Int {
        if value < 0 {
            logger.warning("\(name) must not be negative (got \(value)); using 0")
            return 0
        }
        return value
    }

    /// Runs `body` on the storage with the lock held. Private to the core, but for
    /// tests that inspect the storage (a row's file name, say).
    func withStorage<Result>(_ body: (KVStorage) throws(StashError) -> Result) throws(StashError) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(storage)
    }

    // MARK: - Reading

    /// See ``DiskCache/value(forKey:)``.
    func value(forKey key: String) throws(StashError) -> Value? {
        let key = KVStorage.storedKey(key)
        guard let item = try freshItem(forKey: key) else { return nil }
        return try decode(item, forKey: key)
    }

    /// `value(forKey:)`, with the value's encoded size and expiration.
    ///
    /// (`value(forKey:)` does not go through this: building a `DiskCacheHit`, a generic
    /// type, costs a metadata lookup per call in unspecialised code.)
    func valueWithMetadata(forKey key: String) throws(StashError) -> DiskCacheHit<Value>? {
        let key = KVStorage.storedKey(key)
        guard let item = try freshItem(forKey: key), let value = try decode(item, forKey: key) else { return nil }
        return DiskCacheHit(value: value, size: item.size, expiration: item.expirationTime)
    }

    /// What a read through ``readers`` found.
    private enum PooledRead {
        case item(KVStorage.Item)
        case absent
        /// Read again under `lock` (see ``freshItem(forKey:)``).
        case unsure
    }

    /// The entry for `key` (in stored form) unless there is none or it is past the
    /// age limit, counted as a hit or a miss.
    ///
    /// First through ``readers``, without `lock`, so that reads run beside each
    /// other and beside a commit; then, when that read is unsure (no idle reader,
    /// an expired or damaged entry, an error), through the storage under `lock`,
    /// where an entry past the age limit is removed under the same lock as the read.
    private func freshItem(forKey key: String) throws(StashError) -> KVStorage.Item? {
        try KVStorage.validate(key)
        switch pooledFreshItem(forKey: key, onCallerThread: false) {
        case .item(let item): return item
        case .absent: return nil
        case .unsure: break
        }
        return try withStorage { storage throws(StashError) -> KVStorage.Item? in
            guard let item = try storage.value(forKey: key) else {
                readLock.withLock { misses += 1 }
                return nil
            }
            if _isTooOld(modificationTime: item.modificationTime) {
                if try storage.removeValue(forKey: key) { evictions.record(.expired) }
                readLock.withLock { misses += 1 }
                return nil
            }
            readLock.withLock { hits += 1 }
            return item
        }
    }

    /// The read through ``readers``, counted as a hit or a miss unless `.unsure`
    /// (which counts nothing). With `onCallerThread`, the read blocks on nothing
    /// but a SQLite lookup: a value in a file of its own is `.unsure`, and a flush
    /// of the access log that the read makes due runs later on ``ioQueue``.
    private func pooledFreshItem(forKey key: String, onCallerThread: Bool) -> PooledRead {
        let now = clock.nanosecondsNow
        switch readers.read(key, now: now, readsFiles: !onCallerThread) {
        case .found(let item, let recordsAccess):
            let fresh = readLock.withLock { () -> Bool in
                guard !_isTooOld(modificationTime: item.modificationTime) else { return false }
                hits += 1
                return true
            }
            guard fresh else { return .unsure }  // past the age limit: the locked read removes it
            if recordsAccess, accessLog.record(key, at: now) >= accessFlushThreshold {
                if onCallerThread {
                    ioQueue.async { [self] in lock.withLock { storage.flushAccessTimesIfDue() } }
                } else {
                    lock.withLock { storage.flushAccessTimesIfDue() }
                }
            }
            return .item(item)
        case .absent:
            readLock.withLock { misses += 1 }
            return .absent
        case .unsure:
            return .unsure
        }
    }

    /// The async read's first try, on the caller's thread (issue #26: the hop to
    /// ``ioQueue`` and back costs several times a read; docs/benchmarks.md): a lookup on a reader
    /// of the pool, which blocks on no lock of the cache's and reads no file.
    /// Anything it cannot settle so (a value in a file of its own, no idle reader,
    /// an expired or damaged entry, a value that fails to decode) is
    /// `.needsIOQueue`, having counted nothing.
    func valueOnCallerThread(forKey key: String) throws(StashError) -> DiskCallerThreadRead<Value> {
        switch try itemOnCallerThread(forKey: key) {
        case .done(let found): .done(found?.value)
        case .needsIOQueue: .needsIOQueue
        }
    }

    /// ``valueOnCallerThread(forKey:)`` with the value's encoded size and expiration, for
    /// `Cache`'s promotion of a disk hit into memory.
    func valueWithMetadataOnCallerThread(forKey key: String) throws(StashError) -> DiskCallerThreadRead<DiskCacheHit<Value>> {
        switch try itemOnCallerThread(forKey: key) {
        case .done(let found?): .done(DiskCacheHit(value: found.value, size: found.item.size, expiration: found.item.expirationTime))
        case .done(nil): .done(nil)
        case .needsIOQueue: .needsIOQueue
        }
    }

    /// The read of both caller-thread forms: the decoded value and its stored item.
    private func itemOnCallerThread(forKey key: String) throws(StashError) -> DiskCallerThreadRead<(value: Value, item: KVStorage.Item)> {
        let key = KVStorage.storedKey(key)
        try KVStorage.validate(key)
        switch pooledFreshItem(forKey: key, onCallerThread: true) {
        case .item(let item):
            guard let value = try? codec.decode(item.value) else {
                readLock.withLock { hits -= 1 }  // the read on the queue counts it again
                return .needsIOQueue
            }
            return .done((value, item))
        case .absent:
            return .done(nil)
        case .unsure:
            return .needsIOQueue
        }
    }

    /// Decodes `item`'s bytes; a value that fails to decode is removed and logged,
    /// and reads as `nil` (a miss, not the hit ``freshItem(forKey:)`` counted).
    private func decode(_ item: KVStorage.Item, forKey key: String) throws(StashError) -> Value? {
        do {
            return try codec.decode(item.value)
        } catch {
            logger.error(
                "could not decode a stored value; removing it",
                metadata: ["key": "\(KVStorage.describe(key))", "error": "\(error)"])
            readLock.withLock {
                hits -= 1
                misses += 1
            }
            try withStorage { storage throws(StashError) in _ = try storage.removeValue(forKey: key) }
            return nil
        }
    }

    /// See ``DiskCache/contains(_:)``.
    func contains(_ key: String) throws(StashError) -> Bool {
        let key = KVStorage.storedKey(key)
        return try withStorage { storage throws(StashError) in try storage.contains(key) }
    }

    /// See ``DiskCache/extendedData(forKey:)``.
    func extendedData(forKey key: String) throws(StashError) -> Data? {
        let key = KVStorage.storedKey(key)
        return try withStorage { storage throws(StashError) in try storage.extendedData(forKey: key) }
    }

    /// The manifest readers open, and the most there may be (for tests).
    var readerCount: Int { readers.openCount }
    var readerCapacity: Int { readers.capacity }

    // MARK: - Writing

    /// See ``DiskCache/setValue(_:forKey:ttl:extendedData:)``; returns the encoded
    /// size: the default memory cost in ``Cache``.
    func setValue(_ value: Value, forKey key: String, ttl: Duration?, extendedData: Data?) throws(StashError) -> Int {
        let write = try pendingWrite(value, forKey: key, ttl: ttl, extendedData: extendedData)
        guard !write.removesKey else {
            try withStorage { storage throws(StashError) in _ = try storage.removeValue(forKey: write.key) }
            return write.value.count
        }
        if let failure = writes.submit(write, commit: commitWrites) {
            throw failure
        }
        return write.value.count
    }

    /// `value` validated and encoded for `key`, as a write to commit.
    private func pendingWrite(_ value: Value, forKey key: String, ttl: Duration?, extendedData: Data?) throws(StashError) -> PendingWrite {
        let key = KVStorage.storedKey(key)
        try KVStorage.validate(key)
        let bytes: Data
        do {
            bytes = try codec.encode(value)
        } catch {
            throw StashError(.encodingFailed, "could not encode the value for key \(KVStorage.describe(key))", cause: error)
        }
        return PendingWrite(key: key, value: bytes, ttl: ttl?.nanosecondsClamped, extendedData: extendedData)
    }

    /// Writes several values in one storage transaction (not through ``writes``: the batch is its
    /// own group), each encoded on its own: a value that cannot be encoded or is over the size
    /// limit fails alone; a failed transaction fails every value it carried.
    ///
    /// - Returns: Per value, in order: its encoded size once stored, else its error.
    func setValues(_ values: [(key: String, value: Value)], ttl: Duration?) -> [Result<Int, StashError>] {
        var results = [Result<Int, StashError>](repeating: .success(0), count: values.count)
        var batch: [PendingWrite] = []
        var batchIndices: [Int] = []
        batch.reserveCapacity(values.count)
        for (index, (key, value)) in values.enumerated() {
            do throws(StashError) {
                let write = try pendingWrite(value, forKey: key, ttl: ttl, extendedData: nil)
                results[index] = .success(write.value.count)
                if write.removesKey {
                    try withStorage { storage throws(StashError) in _ = try storage.removeValue(forKey: write.key) }
                } else {
                    batch.append(write)
                    batchIndices.append(index)
                }
            } catch {
                results[index] = .failure(error)
            }
        }
        guard !batch.isEmpty else { return results }
        for (index, failure) in zip(batchIndices, commitWrites(batch)) {
            if let failure { results[index] = .failure(failure) }
        }
        return results
    }

    /// A write waiting in ``writes`` for its commit.
    private struct PendingWrite {
        var key: String
        var value: Data
        /// Nanoseconds to live, or nil for no time to live.
        var ttl: Int64?
        var extendedData: Data?

        /// Whether the time to live is over already: the key is removed instead.
        var removesKey: Bool { ttl.map { $0 <= 0 } ?? false }
    }

    /// Commits a batch of writes that queued up in ``writes`` in one storage
    /// transaction, under the lock, then trims to the limits once. A write larger
    /// than the size limit fails alone; a failed transaction fails every write of
    /// the batch with its error.
    ///
    /// - Returns: Per write, in order: nil once stored, else its error.
    private func commitWrites(_ batch: [PendingWrite]) -> [StashError?] {
        lock.lock()
        defer { lock.unlock() }
        var failures = [StashError?](repeating: nil, count: batch.count)
        var accepted: [Int] = []
        var storageWrites: [KVStorage.Write] = []
        accepted.reserveCapacity(batch.count)
        storageWrites.reserveCapacity(batch.count)
        let now = clock.nanosecondsNow
        for (index, write) in batch.enumerated() {
            if write.value.count > sizeLimit {
                failures[index] = StashError(
                    .valueTooLarge,
                    "a value of \(write.value.count) bytes exceeds the size limit of \(sizeLimit) for key \(KVStorage.describe(write.key)); nothing was changed")
                continue
            }
            accepted.append(index)
            storageWrites.append(KVStorage.Write(
                key: write.key, value: write.value, expiration: _expiration(ttl: write.ttl, now: now),
                extendedData: write.extendedData))
        }
        guard !accepted.isEmpty else { return failures }
        do throws(StashError) {
            let stored = try storage.setValues(storageWrites)
            for (slot, index) in accepted.enumerated() {
                failures[index] = stored[slot]
            }
        } catch {
            for index in accepted { failures[index] = error }
            return failures
        }
        do throws(StashError) {
            try _enforceSizeLimits(storage)
        } catch {
            // The values are stored, but the limits could not be kept: as before
            // group commit, each writer whose value was stored learns it.
            for index in accepted where failures[index] == nil { failures[index] = error }
        }
        return failures
    }

    /// See ``DiskCache/removeValue(forKey:)``.
    func removeValue(forKey key: String) throws(StashError) -> Bool {
        let key = KVStorage.storedKey(key)
        return try withStorage { storage throws(StashError) in try storage.removeValue(forKey: key) }
    }

    /// See ``DiskCache/removeAll(progress:)``. Empties the trash in the background.
    func removeAll(progress: (_ removed: Int, _ total: Int) -> Void) throws(StashError) {
        try withoutActuallyEscaping(progress) { progress throws(StashError) in
            try withStorage { storage throws(StashError) in try storage.removeAll(progress: progress) }
        }
        maintenanceQueue.async { [self] in emptyTrash() }
    }

    // MARK: - Size and statistics

    /// See ``DiskCache/count``.
    func count() throws(StashError) -> Int {
        try withStorage { storage throws(StashError) in try storage.totals().count }
    }

    /// See ``DiskCache/totalSize``.
    func totalSize() throws(StashError) -> Int {
        try withStorage { storage throws(StashError) in try storage.totals().size }
    }

    /// See ``DiskCache/statistics``.
    func statistics() -> CacheStatistics {
        lock.withLock { () -> CacheStatistics in
            var counts = evictions
            counts.record(.expired, count: storage.expiredOnRead)
            let (hits, misses) = readLock.withLock { () -> (Int, Int) in (self.hits, self.misses) }
            return CacheStatistics(
                hits: hits, misses: misses, evictions: counts.total, evictionsByReason: counts.byReason)
        }
    }

    /// See `usage()`.
    func usage() throws(StashError) -> DiskUsage {
        try withStorage { storage throws(StashError) in try storage.usage() }
    }

    // MARK: - Limits

    /// The limits, read under the lock.
    var limits: (count: Int, size: Int, age: Int64, freeDiskSpace: Int) {
        lock.withLock { (countLimit, sizeLimit, ageLimit, freeDiskSpaceLimit) }
    }

    /// Sets the count limit (a negative one is 0, with a warning) and trims to it,
    /// logging a failure: property setters cannot throw.
    func setCountLimit(_ limit: Int) {
        let limit = Self.clamped(limit, "countLimit", logger: logger)
        trimLogging { storage throws(StashError) in
            countLimit = limit
            try _enforceSizeLimits(storage)
        }
    }

    /// Sets the size limit, as ``setCountLimit(_:)``.
    func setSizeLimit(_ limit: Int) {
        let limit = Self.clamped(limit, "sizeLimit", logger: logger)
        trimLogging { storage throws(StashError) in
            sizeLimit = limit
            try _enforceSizeLimits(storage)
        }
    }

    /// Sets the age limit (`nil`: none; negative: 0, with a warning) and removes
    /// the entries past it.
    func setAgeLimit(_ limit: Duration?) {
        var nanos = limit?.nanosecondsClamped ?? .max
        if nanos < 0 {
            logger.warning("ageLimit must not be negative; using 0")
            nanos = 0
        }
        trimLogging { storage throws(StashError) in
            readLock.withLock { ageLimit = nanos }
            if nanos != .max {
                evictions.record(.expired, count: try storage.trim(toAge: .nanoseconds(nanos)))
            }
        }
    }

    /// Sets the free-disk-space limit (negative: 0, with a warning); the
    /// background trim keeps it.
    func setFreeDiskSpaceLimit(_ limit: Int) {
        let limit = Self.clamped(limit, "freeDiskSpaceLimit", logger: logger)
        lock.withLock { freeDiskSpaceLimit = limit }
    }

    /// Runs a limit change and its trim under the lock, logging a failure.
    private func trimLogging(_ body: (KVStorage) throws(StashError) -> Void) {
        do {
            try withStorage(body)
        } catch {
            logger.error("trimming to a new limit failed", metadata: ["error": "\(error)"])
        }
    }

    /// When an entry written now with `ttl` nanoseconds to live expires: the
    /// sooner of its own time to live and the age limit, or nil for never.
    private func _expiration(ttl: Int64?, now: Int64) -> Int64? {
        let deadline = Swift.min(ttl.map { now.addingClamped($0) } ?? .max, now.addingClamped(ageLimit))
        return deadline == .max ? nil : deadline
    }

    /// Whether an entry written at `modificationTime` is past the age limit.
    /// Reads the clock only when there is a limit. Needs `lock` or `readLock` held.
    private func _isTooOld(modificationTime: Int64) -> Bool {
        ageLimit != .max && clock.nanosecondsNow &- modificationTime >= ageLimit
    }

    /// Trims by count and size, least recently used first. Called after each
    /// write, so that both limits hold when the write returns.
    private func _enforceSizeLimits(_ storage: KVStorage) throws(StashError) {
        // Without limits there is nothing to check: skip reading the totals,
        // about a tenth of a small write's cost.
        guard countLimit != .max || sizeLimit != .max else { return }
        let totals = try storage.totals()
        if totals.count > countLimit {
            evictions.record(.countLimit, count: try storage.trim(toCount: countLimit))
        }
        if totals.size > sizeLimit {
            evictions.record(.costLimit, count: try storage.trim(toSize: sizeLimit))
        }
    }

    // MARK: - Trimming

    /// See ``DiskCache/trim(toCount:)``.
    func trim(toCount maxCount: Int) throws(StashError) {
        try withStorage { storage throws(StashError) in
            evictions.record(.countLimit, count: try storage.trim(toCount: Swift.max(maxCount, 0)))
        }
    }

    /// See ``DiskCache/trim(toSize:)``.
    func trim(toSize maxSize: Int) throws(StashError) {
        try withStorage { storage throws(StashError) in
            evictions.record(.costLimit, count: try storage.trim(toSize: Swift.max(maxSize, 0)))
        }
    }

    /// See ``DiskCache/trim(toAge:)``.
    func trim(toAge age: Duration) throws(StashError) {
        try withStorage { storage throws(StashError) in
            evictions.record(.expired, count: try storage.trim(toAge: Swift.max(age, .zero)))
        }
    }

    /// See `removeExpired()`.
    func removeExpired() throws(StashError) {
        try withStorage { storage throws(StashError) in
            evictions.record(.expired, count: try storage.removeExpired())
        }
    }

    // MARK: - Lifecycle

    /// See `flush()`.
    func flush() throws(StashError) {
        try withStorage { storage throws(StashError) in try storage.flushAccessTimes() }
    }

    /// Stops the auto-trim and closes the storage, after waiting for a background
    /// consistency check under way to finish (at most one check's duration:
    /// O(n)). Idempotent. Blocks.
    func close() {
        setAutoTrimInterval(nil)
        checkLock.withLock {
            lock.withLock { storage.close() }
        }
    }

    /// Blocks until the background jobs queued so far (the consistency check
    /// after opening, emptying the trash, a trim under way) have finished.
    func waitForBackgroundWork() {
        maintenanceQueue.sync {}
    }

    // MARK: - Inspection and repair

    /// See `verify()`.
    func verify() throws(StashError) -> RepairReport {
        try withStorage { storage throws(StashError) in try storage.checkConsistency() }
    }

    /// Deletes what `removeAll` moved to the trash. Needs no lock: the trash is
    /// independent of the storage.
    ///
    /// - Returns: The number of files and directories deleted.
    @discardableResult
    func emptyTrash() -> Int {
        let removed = storage.trash.empty()
        if removed > 0 {
            logger.debug("emptied the trash", metadata: ["entries": "\(removed)"])
        }
        return removed
    }

    // MARK: - Background work

    /// Everything the background timer does: save access times, remove expired
    /// and too-old entries, keep the limits and the free disk space, and empty
    /// the trash. Failures go to the logger.
    private func runMaintenance() {
        do {
            try withStorage { storage throws(StashError) in
                try storage.flushAccessTimes()
                // Writes record the age limit as an expiration time, so this
                // also removes entries past the age limit.
                evictions.record(.expired, count: try storage.removeExpired())
                try _enforceSizeLimits(storage)
                if freeDiskSpaceLimit > 0 {
                    let removed = try storage.trimForFreeDiskSpace(limit: freeDiskSpaceLimit)
                    evictions.record(.freeDiskSpace, count: removed)
                }
            }
        } catch {
            logger.error("background trim failed", metadata: ["error": "\(error)"])
        }
        emptyTrash()
    }

    /// Sets the test hook that the background consistency check calls after
    /// listing `data/`.
    func setConsistencyCheckAfterListing(_ hook: (@Sendable () -> Void)?) {
        lock.withLock { consistencyCheckAfterListing = hook }
    }

    /// Runs the consistency check in the background, logging what it repaired,
    /// then empties the trash. Returns at once.
    ///
    /// The check does NOT hold the cache's lock: it runs on a storage of its own,
    /// opened on the same directory by ``KVStorage/checkConsistency(ofDirectory:kind:clock:logger:options:emptyingTrash:afterListing:)``
    /// (which creates nothing) and closed after it (the design supports several
    /// instances on one directory: SQLite's locking and the write protocol keep
    /// them consistent), so reads and writes go on while it runs. It is O(n)
    /// (docs/benchmarks.md gives its duration), during which it holds SQLite's
    /// write lock only for its final comparison: writes wait for that part,
    /// reads never. The cache's lock is taken twice, briefly: to read the
    /// storage's settings before, and after, to reopen the manifest if the check
    /// reset it. (The cache's cached totals need nothing: the check's commits
    /// show in SQLite's `data_version`, like any other connection's.)
    ///
    /// The cache's pending access times are not flushed first: the check compares
    /// rows and files, never access times, and a time flushed later for a row the
    /// check removed updates nothing.
    ///
    /// `close()` waits for a check under way; a check scheduled after `close()`,
    /// or once the cache's manifest is no longer in place (its directory deleted),
    /// does nothing.
    func scheduleConsistencyCheck() {
        maintenanceQueue.async { [weak self] in
            guard let self else { return }
            runConsistencyCheck()
            emptyTrash()
        }
    }

    /// The body of ``scheduleConsistencyCheck()``, on the calling thread. Failures
    /// go to the logger. Blocks for the check's duration; takes `checkLock`
    /// throughout and `lock` only briefly.
    private func runConsistencyCheck() {
        checkLock.lock()
        defer { checkLock.unlock() }
        // Not after close(), and not if the manifest the cache opened is gone.
        let settings = lock.withLock { () -> (kind: DiskStorageKind, options: KVStorageOptions, hook: (@Sendable () -> Void)?)? in
            guard !storage.isClosed, storage.manifestIsCurrent() else { return nil }
            return (storage.kind, storage.options, consistencyCheckAfterListing)
        }
        guard let settings else { return }
        let report: RepairReport
        do {
            report = try KVStorage.checkConsistency(
                ofDirectory: directory, kind: settings.kind, clock: clock, logger: logger, options: settings.options,
                afterListing: settings.hook)
        } catch {
            if (try? FileSystem.entryStatus(directory)) == nil || error.code == .directoryUnusable {
                // Not a failure of the cache: someone deleted its directory meanwhile.
                logger.debug("consistency check stopped: the cache directory is gone", metadata: ["error": "\(error)"])
            } else {
                logger.error("consistency check failed", metadata: ["error": "\(error)"])
            }
            return
        }
        lock.withLock {
            // The check set the manifest aside: make the cache's instance reopen
            // the new one now rather than at its next write.
            guard !storage.isClosed, report.manifestReset else { return }
            _ = try? storage.requireWritableConnection()
        }
        if !report.isClean {
            logger.notice("consistency check repaired the cache", metadata: ["report": "\(report)"])
        }
    }

    // MARK: - Auto-trim

    /// The background trim's interval, or `nil` when it is off.
    var autoTrimInterval: Duration? {
        lock.withLock { autoTrimTimer.interval }
    }

    /// Reschedules the background trim (`nil` stops it).
    func setAutoTrimInterval(_ interval: Duration?) {
        let interval = AutoTrimTimer.validated(interval, logger: logger)
        lock.withLock {
            autoTrimTimer.reschedule(every: interval, on: maintenanceQueue, owner: self) { $0.runMaintenance() }
        }
    }

    // MARK: - Time, and blocking work off the cooperative pool

    /// The cache's clock's reading now.
    var nanosecondsNow: Int64 { clock.nanosecondsNow }

    /// Runs `body` on ``ioQueue`` and resumes the caller with its result, so that
    /// blocking I/O never occupies a thread of Swift's cooperative pool.
    func run<Result: Sendable>(_ body: @escaping @Sendable () throws(StashError) -> Result) async throws(StashError) -> Result {
        let result: Swift.Result<Result, StashError> = await withCheckedContinuation { continuation in
            ioQueue.async {
                do throws(StashError) {
                    continuation.resume(returning: .success(try body()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }
}
