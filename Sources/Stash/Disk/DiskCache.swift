#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging

/// A persistent, thread-safe key-value cache on disk: a SQLite manifest plus
/// files, with LRU trimming and count, size, age and free-disk limits.
///
/// ```swift
/// let avatars = try DiskCache<Data>(directory: "/var/cache/myapp/avatars", sizeLimit: 500 << 20)
/// try avatars.setValue(png, forKey: "user/42", ttl: .seconds(86_400))
/// let cached = try avatars.value(forKey: "user/42")   // nil on a miss
/// ```
///
/// ## Storage
/// One directory holds `manifest.sqlite` (WAL mode), a `data/` folder with one
/// file per large value, and a `trash/` folder emptied in the background. Small
/// values live inline in SQLite, large ones in files: see ``DiskStorageKind``.
/// File names are random, never derived from keys, so any non-empty `String` is
/// a valid key. Keys compare as Swift's `String`s do: canonically equivalent
/// spellings (precomposed "é" and "e" + U+0301) are one key, stored in NFC. See the On-Disk Format article for the schema.
///
/// ## Limits
/// ``countLimit`` and ``sizeLimit`` are strict for this instance: after a write
/// returns, the cache holds at most that many entries and bytes of values, the
/// least recently used going first. (Another process writing to the same
/// directory can exceed them until this instance's next write or trim.) An
/// entry past ``ageLimit`` or its own time to live is never returned.
/// ``freeDiskSpaceLimit`` is kept by the background trim every
/// ``autoTrimInterval``.
///
/// ## Reads don't write
/// A read is one indexed `SELECT`. Last-access times for LRU are kept in memory
/// and written in one transaction by the background trim, before any trim, and
/// on ``close()``.
///
/// ## Safety
/// Writes are atomic: a file is written in full under a fresh name that nothing
/// refers to, and only then recorded in the manifest, whose commit publishes it;
/// so a crash never leaves a torn value. A corrupt manifest is set aside, logged, and replaced by an
/// empty one; the cache keeps working. Several instances and processes may
/// share a directory.
///
/// ## Thread safety
/// Every member may be called from any thread. Storage calls are serialised by
/// one lock and block on disk I/O; encoding and decoding run outside the lock.
/// Each operation also has an `async` form that runs the blocking work on a
/// dedicated dispatch queue, never on Swift's cooperative thread pool.
public final class DiskCache<Value: Sendable>: Sendable {
    let core: DiskCacheCore<Value>

    /// Opens the cache in `directory`, creating it (mode 0700) if needed.
    ///
    /// Opening costs the same for any number of entries: it does not scan the
    /// data directory. A consistency check then runs in the background and
    /// repairs orphan files and rows whose file is missing.
    ///
    /// - Parameters:
    ///   - directory: The cache's directory.
    ///   - storage: Where values go: inline in SQLite, in files, or by size.
    ///     Defaults to ``DiskStorageKind/default``.
    ///   - codec: How values become bytes.
    ///   - countLimit: The most entries. Strict. Defaults to `Int.max`: no limit.
    ///   - sizeLimit: The most bytes of values. Strict. Defaults to `Int.max`: no limit.
    ///   - ageLimit: How long after its last write an entry expires. Strict.
    ///     Defaults to `nil`: never.
    ///   - freeDiskSpaceLimit: Free bytes to keep on the volume; the background
    ///     trim evicts until there are. Defaults to 0: none.
    ///   - autoTrimInterval: How often the background trim runs. Defaults to 60
    ///     seconds; `nil` turns it off.
    ///   - clock: The source of time. Defaults to ``WallClock``: times are
    ///     stored, so they must survive restarts.
    ///   - logger: Where background failures and repairs are reported. Defaults
    ///     to a logger labelled `Stash.DiskCache`.
    /// - Throws: ``StashError`` with ``StashError/Code/invalidArgument`` for a
    ///   negative limit, ``StashError/Code/directoryUnusable`` if the directory
    ///   cannot be created or used, ``StashError/Code/databaseFailed`` if SQLite
    ///   fails for another reason than damage.
    /// - Complexity: O(1) in the number of entries. Blocks on disk I/O.
    public init(
        directory: String,
        storage: DiskStorageKind = .default,
        codec: DiskCodec<Value>,
        countLimit: Int = .max,
        sizeLimit: Int = .max,
        ageLimit: Duration? = nil,
        freeDiskSpaceLimit: Int = 0,
        autoTrimInterval: Duration? = .seconds(60),
        clock: any CacheClock = WallClock(),
        logger: Logger = Logger(label: "Stash.DiskCache")
    ) throws(StashError) {
        for (name, value) in [("countLimit", countLimit), ("sizeLimit", sizeLimit), ("freeDiskSpaceLimit", freeDiskSpaceLimit)]
        where value < 0 {
            throw StashError(.invalidArgument, "\(name) must not be negative (got \(value))")
        }
        let age = ageLimit?.nanosecondsClamped ?? .max
        if age < 0 {
            throw StashError(.invalidArgument, "ageLimit must not be negative (got \(ageLimit!))")
        }
        let kvStorage = try KVStorage(directory: directory, kind: storage, clock: clock, logger: logger)
        core = DiskCacheCore(
            storage: kvStorage, codec: codec, countLimit: countLimit, sizeLimit: sizeLimit, ageLimit: age,
            freeDiskSpaceLimit: freeDiskSpaceLimit, clock: clock, logger: logger)
        core.setAutoTrimInterval(autoTrimInterval)
        core.scheduleConsistencyCheck()
    }

    /// The cache's directory.
    public var directory: String { core.storage.directory }

    // MARK: - Reading

    /// The value stored for `key`, or `nil` if there is none, it has expired, or
    /// its bytes cannot be decoded (the entry is then removed and the failure logged).
    ///
    /// - Throws: ``StashError``: ``StashError/Code/invalidKey`` for an empty key;
    ///   ``StashError/Code/databaseFailed`` or ``StashError/Code/ioFailed`` when
    ///   the disk fails; ``StashError/Code/closed`` after ``close()``.
    /// - Complexity: One indexed `SELECT`, O(log n), plus reading the value.
    ///   Blocks on disk I/O. Thread-safe.
    public func value(forKey key: String) throws(StashError) -> Value? {
        let key = Self.storedKey(key)
        guard let item = try freshItem(forKey: key) else { return nil }
        return try decode(item, forKey: key)
    }

    /// A value read back, with what ``Cache`` needs to promote it into memory.
    struct Found {
        var value: Value
        /// The encoded size in bytes.
        var size: Int
        /// When it expires, on the cache's clock, or nil for never.
        var expiration: Int64?
    }

    /// `value(forKey:)`, with the value's encoded size and expiration.
    ///
    /// (`value(forKey:)` does not go through this: building a `Found`, a generic
    /// type, costs a metadata lookup per call in unspecialised code.)
    func valueWithMetadata(forKey key: String) throws(StashError) -> Found? {
        let key = Self.storedKey(key)
        guard let item = try freshItem(forKey: key), let value = try decode(item, forKey: key) else { return nil }
        return Found(value: value, size: item.size, expiration: item.expirationTime)
    }

    /// The entry for `key` (in stored form) unless there is none or it is past the
    /// age limit. The age limit is read, and an entry past it removed, under the
    /// same lock as the read.
    private func freshItem(forKey key: String) throws(StashError) -> KVStorage.Item? {
        try core.withStorage { storage throws(StashError) -> KVStorage.Item? in
            guard let item = try storage.value(forKey: key) else { return nil }
            if core.isTooOld(modificationTime: item.modificationTime) {
                _ = try storage.removeValue(forKey: key)
                return nil
            }
            return item
        }
    }

    /// Decodes `item`'s bytes; a value that fails to decode is removed and logged,
    /// and reads as `nil`.
    private func decode(_ item: KVStorage.Item, forKey key: String) throws(StashError) -> Value? {
        do {
            return try core.codec.decode(item.value)
        } catch {
            core.logger.error(
                "could not decode a stored value; removing it",
                metadata: ["key": "\(KVStorage.describe(key))", "error": "\(error)"])
            try core.withStorage { storage throws(StashError) in _ = try storage.removeValue(forKey: key) }
            return nil
        }
    }

    /// Whether the cache holds a fresh value for `key`. Does not count as an access for LRU.
    ///
    /// - Throws: As `value(forKey:)`.
    /// - Complexity: One indexed `SELECT`. Blocks on disk I/O. Thread-safe.
    public func contains(_ key: String) throws(StashError) -> Bool {
        let key = Self.storedKey(key)
        return try core.withStorage { storage throws(StashError) in try storage.contains(key) }
    }

    /// The extended data stored beside `key`'s value, or `nil` if there is none
    /// or there is no fresh value.
    ///
    /// - Throws: As `value(forKey:)`.
    /// - Complexity: One indexed `SELECT`. Blocks on disk I/O. Thread-safe.
    public func extendedData(forKey key: String) throws(StashError) -> Data? {
        let key = Self.storedKey(key)
        return try core.withStorage { storage throws(StashError) in try storage.extendedData(forKey: key) }
    }

    // MARK: - Writing

    /// Stores `value` for `key`, replacing any value already there, then evicts
    /// the least recently used entries until ``countLimit`` and ``sizeLimit`` hold.
    ///
    /// The write is atomic: if it throws, the previous value for `key`, and every
    /// other entry, is intact.
    ///
    /// - Parameters:
    ///   - value: The value, encoded by the cache's codec.
    ///   - key: Any non-empty string.
    ///   - ttl: How long the entry lives, on top of ``ageLimit``. Defaults to
    ///     `nil`. Zero or negative removes any stored value and stores nothing.
    ///   - extendedData: Bytes stored beside the value, read with
    ///     `extendedData(forKey:)`. Defaults to `nil`.
    /// - Throws: ``StashError``: ``StashError/Code/invalidKey`` for an empty key;
    ///   ``StashError/Code/encodingFailed`` if the codec throws;
    ///   ``StashError/Code/valueTooLarge`` if the encoded value alone exceeds
    ///   ``sizeLimit`` (nothing is changed); ``StashError/Code/ioFailed`` or
    ///   ``StashError/Code/databaseFailed`` when the disk fails (nothing is changed);
    ///   ``StashError/Code/closed`` after ``close()``.
    /// - Complexity: One transaction, plus writing a file for a large value.
    ///   Blocks on disk I/O. Thread-safe.
    public func setValue(_ value: Value, forKey key: String, ttl: Duration? = nil, extendedData: Data? = nil) throws(StashError) {
        _ = try setValueReturningSize(value, forKey: key, ttl: ttl, extendedData: extendedData)
    }

    /// `setValue(_:forKey:ttl:extendedData:)`, returning the encoded size: the
    /// default memory cost in ``Cache``.
    func setValueReturningSize(_ value: Value, forKey key: String, ttl: Duration?, extendedData: Data? = nil) throws(StashError) -> Int {
        let key = Self.storedKey(key)
        try KVStorage.validate(key)
        let bytes: Data
        do {
            bytes = try core.codec.encode(value)
        } catch {
            throw StashError(.encodingFailed, "could not encode the value for key \(KVStorage.describe(key))", cause: error)
        }
        try store(bytes, forKey: key, ttl: ttl, extendedData: extendedData)
        return bytes.count
    }

    /// Writes encoded bytes and keeps the limits.
    private func store(_ bytes: Data, forKey key: String, ttl: Duration?, extendedData: Data?) throws(StashError) {
        let ttlNanos = ttl?.nanosecondsClamped
        try core.withStorage { storage throws(StashError) in
            if let ttlNanos, ttlNanos <= 0 {
                _ = try storage.removeValue(forKey: key)
                return
            }
            if bytes.count > core.sizeLimit {
                throw StashError(
                    .valueTooLarge,
                    "a value of \(bytes.count) bytes exceeds the size limit of \(core.sizeLimit) for key \(KVStorage.describe(key)); nothing was changed")
            }
            let expiration = core.expiration(ttl: ttlNanos, now: core.clock.nanosecondsNow)
            try storage.setValue(bytes, forKey: key, expiration: expiration, extendedData: extendedData)
            try core.enforceSizeLimits(storage)
        }
    }

    /// Removes the value for `key`.
    ///
    /// - Returns: Whether there was a value to remove.
    /// - Throws: ``StashError``: ``StashError/Code/invalidKey`` for an empty key,
    ///   or a disk failure (nothing is changed then).
    /// - Complexity: One transaction. Blocks on disk I/O. Thread-safe.
    @discardableResult
    public func removeValue(forKey key: String) throws(StashError) -> Bool {
        let key = Self.storedKey(key)
        return try core.withStorage { storage throws(StashError) in try storage.removeValue(forKey: key) }
    }

    /// Removes every entry.
    ///
    /// The data directory is moved into `trash/` at once and emptied in the
    /// background, so this is fast however many files there are.
    ///
    /// - Throws: ``StashError`` on a disk failure; nothing is removed then.
    /// - Complexity: O(n) row deletions in one transaction; O(1) file-system
    ///   work. Blocks on disk I/O. Thread-safe.
    public func removeAll() throws(StashError) {
        try removeAll(progress: { _, _ in })
    }

    /// Removes every entry, reporting progress, like YYCache's
    /// `removeAllObjectsWithProgressBlock`.
    ///
    /// - Parameter progress: Called with (entries removed so far, total) as
    ///   batches complete, and once at the end with (total, total). Runs with
    ///   the cache's lock held: keep it short and don't call back into the cache.
    /// - Throws: ``StashError`` on a disk failure; nothing is removed then.
    /// - Complexity: As `removeAll()`.
    public func removeAll(progress: (_ removed: Int, _ total: Int) -> Void) throws(StashError) {
        try withoutActuallyEscaping(progress) { progress throws(StashError) in
            try core.withStorage { storage throws(StashError) in try storage.removeAll(progress: progress) }
        }
        core.maintenanceQueue.async { [core] in core.emptyTrash() }
    }

    // MARK: - Size

    /// The number of entries, including expired ones not yet trimmed.
    ///
    /// - Throws: ``StashError`` on a disk failure.
    /// - Complexity: O(1): kept in the manifest. Blocks on disk I/O. Thread-safe.
    public var totalCount: Int {
        get throws(StashError) {
            try core.withStorage { storage throws(StashError) in try storage.totals().count }
        }
    }

    /// The total size of the stored values, in bytes.
    ///
    /// - Throws: ``StashError`` on a disk failure.
    /// - Complexity: O(1): kept in the manifest. Blocks on disk I/O. Thread-safe.
    public var totalSize: Int {
        get throws(StashError) {
            try core.withStorage { storage throws(StashError) in try storage.totals().size }
        }
    }

    // MARK: - Lifecycle

    /// Writes pending last-access times to the manifest now.
    ///
    /// - Throws: ``StashError`` on a disk failure.
    /// - Complexity: One transaction. Blocks on disk I/O. Thread-safe.
    public func flush() throws(StashError) {
        try core.withStorage { storage throws(StashError) in try storage.flushAccessTimes() }
    }

    /// Saves pending access times and closes the manifest. Every later call
    /// throws ``StashError/Code/closed``. Also done when the cache is deallocated.
    ///
    /// If the background consistency check that follows opening is still running,
    /// waits for it to finish first, so that nothing uses the directory once this
    /// returns.
    ///
    /// - Complexity: One transaction, plus the rest of a consistency check under
    ///   way (O(n)). Blocks on disk I/O. Thread-safe.
    public func close() {
        core.setAutoTrimInterval(nil)
        core.close()
    }
}

extension DiskCache where Value == Data {
    /// Opens a cache of raw bytes in `directory`. See
    /// ``init(directory:storage:codec:countLimit:sizeLimit:ageLimit:freeDiskSpaceLimit:autoTrimInterval:clock:logger:)``.
    ///
    /// - Throws: As the designated initialiser.
    public convenience init(
        directory: String,
        storage: DiskStorageKind = .default,
        countLimit: Int = .max,
        sizeLimit: Int = .max,
        ageLimit: Duration? = nil,
        freeDiskSpaceLimit: Int = 0,
        autoTrimInterval: Duration? = .seconds(60),
        clock: any CacheClock = WallClock(),
        logger: Logger = Logger(label: "Stash.DiskCache")
    ) throws(StashError) {
        try self.init(
            directory: directory, storage: storage, codec: .data, countLimit: countLimit, sizeLimit: sizeLimit,
            ageLimit: ageLimit, freeDiskSpaceLimit: freeDiskSpaceLimit, autoTrimInterval: autoTrimInterval,
            clock: clock, logger: logger)
    }
}
