#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import Logging

/// The thread-safe heart of ``DiskCache``: a ``KVStorage`` behind a lock, the
/// codec, the limits, and the background work (trimming, emptying the trash,
/// the start-up consistency check).
///
/// Encoding and decoding run outside the lock; only storage calls run under it.
final class DiskCacheCore<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `storage` and every `var` below are only touched with
    // `lock` held; the `let`s are immutable and Sendable (KVStorage itself is not,
    // which is why it never escapes the lock). The background consistency check's
    // own KVStorage is created, used and closed on one thread, never shared.

    let lock = Lock()
    /// Held for the whole background consistency check, and by ``close()`` before it
    /// closes the storage, so that no check still uses the directory once `close()`
    /// has returned. Never taken by reads or writes. Lock order: `checkLock`, then
    /// `lock`.
    let checkLock = Lock()
    let storage: KVStorage
    let codec: DiskCodec<Value>
    let logger: Logger
    let clock: any CacheClock
    /// Runs the async API's blocking work, never on Swift's cooperative thread pool.
    let ioQueue: DispatchQueue
    /// Runs the background jobs, so that they never queue in front of callers.
    let maintenanceQueue: DispatchQueue

    var countLimit: Int
    var sizeLimit: Int
    /// Nanoseconds, or `Int64.max` for no limit.
    var ageLimit: Int64
    var freeDiskSpaceLimit: Int
    var autoTrimTimer = AutoTrimTimer()
    /// A test hook: called by the background consistency check on the maintenance
    /// queue, without the cache's lock, once it has listed `data/` and before its
    /// write transaction. `nil` (the default) outside tests. Guarded by `lock`.
    var consistencyCheckAfterListing: (@Sendable () -> Void)?

    init(
        storage: KVStorage, codec: DiskCodec<Value>, countLimit: Int, sizeLimit: Int, ageLimit: Int64,
        freeDiskSpaceLimit: Int, clock: any CacheClock, logger: Logger
    ) {
        self.storage = storage
        self.codec = codec
        self.countLimit = countLimit
        self.sizeLimit = sizeLimit
        self.ageLimit = ageLimit
        self.freeDiskSpaceLimit = freeDiskSpaceLimit
        self.clock = clock
        self.logger = logger
        ioQueue = DispatchQueue(label: "Stash.DiskCache.io")
        maintenanceQueue = DispatchQueue(label: "Stash.DiskCache.maintenance", qos: .utility)
    }

    deinit {
        autoTrimTimer.cancel()
        storage.close()
    }

    /// Closes the storage, after waiting for a background consistency check under
    /// way to finish (at most one check's duration: O(n)). Idempotent. Blocks.
    func close() {
        checkLock.withLock {
            lock.withLock { storage.close() }
        }
    }

    /// Runs `body` on the storage with the lock held.
    func withStorage<Result>(_ body: (KVStorage) throws(StashError) -> Result) throws(StashError) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(storage)
    }

    // MARK: - Limits

    /// When an entry written now with `ttl` nanoseconds to live expires: the
    /// sooner of its own time to live and the age limit, or nil for never.
    func expiration(ttl: Int64?, now: Int64) -> Int64? {
        let deadline = Swift.min(ttl.map { now.addingClamped($0) } ?? .max, now.addingClamped(ageLimit))
        return deadline == .max ? nil : deadline
    }

    /// Whether an entry written at `modificationTime` is past the age limit.
    /// Reads the clock only when there is a limit. Call with the lock held.
    func isTooOld(modificationTime: Int64) -> Bool {
        ageLimit != .max && clock.nanosecondsNow &- modificationTime >= ageLimit
    }

    /// Trims by count and size, least recently used first. Called with the lock
    /// held, after each write, so that both limits hold when the write returns.
    func enforceSizeLimits(_ storage: KVStorage) throws(StashError) {
        // Without limits there is nothing to check: skip reading the totals,
        // about a tenth of a small write's cost.
        guard countLimit != .max || sizeLimit != .max else { return }
        let totals = try storage.totals()
        if totals.count > countLimit {
            _ = try storage.trim(toCount: countLimit)
        }
        if totals.size > sizeLimit {
            _ = try storage.trim(toSize: sizeLimit)
        }
    }

    /// Everything the background timer does: save access times, remove expired
    /// and too-old entries, keep the limits and the free disk space, and empty
    /// the trash. Failures go to the logger.
    func runMaintenance() {
        do {
            try withStorage { storage throws(StashError) in
                try storage.flushAccessTimes()
                // Writes record the age limit as an expiration time, so this
                // also removes entries past the age limit.
                _ = try storage.removeExpired()
                try enforceSizeLimits(storage)
                if freeDiskSpaceLimit > 0 {
                    _ = try storage.trimForFreeDiskSpace(limit: freeDiskSpaceLimit)
                }
            }
        } catch {
            logger.error("background trim failed", metadata: ["error": "\(error)"])
        }
        emptyTrash()
    }

    /// Deletes what `removeAll` moved to the trash. Needs no lock: the trash is
    /// independent of the storage.
    func emptyTrash() {
        let removed = storage.trash.empty()
        if removed > 0 {
            logger.debug("emptied the trash", metadata: ["entries": "\(removed)"])
        }
    }

    /// Runs the consistency check in the background, logging what it repaired,
    /// then empties the trash. Returns at once.
    ///
    /// The check does NOT hold the cache's lock: it runs on a `KVStorage` of its
    /// own, opened on the same directory for the check and closed after it (the
    /// design supports several instances on one directory: SQLite's locking and the
    /// write protocol keep them consistent), so reads and writes go on while it
    /// runs. It is O(n), about 80 ms for 100,000 inline entries and up to a second
    /// for 100,000 files (docs/benchmarks.md), during which it holds SQLite's write
    /// lock only for its final comparison: writes wait for that part, reads never.
    /// The cache's lock is taken twice, briefly: to read the storage's settings
    /// before, and after, to reopen the manifest if the check reset it. (The
    /// cache's cached totals need nothing: the check's commits show in SQLite's
    /// `data_version`, like any other connection's.)
    ///
    /// The cache's pending access times are not flushed first: the check compares
    /// rows and files, never access times, and a time flushed later for a row the
    /// check removed updates nothing.
    ///
    /// ``close()`` waits for a check under way; a check scheduled after `close()`,
    /// or once the cache's manifest is no longer in place (its directory deleted),
    /// does nothing, so that it never creates the directory again.
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
        // Not after close(), and not if the manifest the cache opened is gone (its
        // directory deleted, say): opening a storage would create the directory again.
        let settings = lock.withLock { () -> (directory: String, kind: DiskStorageKind, options: KVStorageOptions, hook: (@Sendable () -> Void)?)? in
            guard !storage.isClosed, storage.manifestIsCurrent() else { return nil }
            return (storage.directory, storage.kind, storage.options, consistencyCheckAfterListing)
        }
        guard let settings else { return }
        let report: RepairReport
        do {
            let checker = try KVStorage(
                directory: settings.directory, kind: settings.kind, clock: clock, logger: logger, options: settings.options)
            defer { checker.close() }
            report = try checker.checkConsistency(afterListing: settings.hook)
        } catch {
            if (try? FileSystem.entryStatus(settings.directory)) == nil {
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

    func setAutoTrimInterval(_ interval: Duration?) {
        let interval = AutoTrimTimer.validated(interval, logger: logger)
        lock.withLock {
            autoTrimTimer.reschedule(every: interval, on: maintenanceQueue, owner: self) { $0.runMaintenance() }
        }
    }

    // MARK: - Running blocking work off the cooperative pool

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
