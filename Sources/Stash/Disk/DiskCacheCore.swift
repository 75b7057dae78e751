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
    // which is why it never escapes the lock).

    let lock = Lock()
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

    /// Runs the consistency check in the background, logging what it repaired.
    ///
    /// It holds the cache's lock while it runs: O(n), about 80 ms for 100,000
    /// inline entries and up to a second for 100,000 files (docs/benchmarks.md),
    /// so calls made in that window wait.
    func scheduleConsistencyCheck() {
        maintenanceQueue.async { [weak self] in
            guard let self else { return }
            do {
                let report = try withStorage { storage throws(StashError) in try storage.checkConsistency() }
                if !report.isClean {
                    logger.notice("consistency check repaired the cache", metadata: ["report": "\(report)"])
                }
            } catch {
                logger.error("consistency check failed", metadata: ["error": "\(error)"])
            }
            emptyTrash()
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
