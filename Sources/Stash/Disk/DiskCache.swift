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
/// spellings (precomposed "é" and "e" + U+0301) are one key, stored in NFC. The
/// layout and the schema are described in <doc:OnDiskFormat>.
///
/// ## Limits
/// ``countLimit`` and ``sizeLimit`` are strict for this instance: after a write
/// returns, the cache holds at most that many entries and bytes of values, the
/// least recently used going first. (Another process writing to the same
/// directory can exceed them until this instance's next write or trim.) An
/// entry past ``ageLimit`` or its own time to live is never returned.
/// ``freeDiskSpaceLimit`` is kept by the background trim every
/// ``autoTrimInterval``. A negative limit, given to the initialiser or a
/// setter, is treated as 0 and logged as a warning: never an error or a trap.
///
/// ## Reads don't write
/// A read is one indexed `SELECT`. Last-access times for LRU are kept in memory
/// and written in one transaction by the background trim, before any trim, and
/// on `close()`.
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
/// Writers from several threads share commits: writes that arrive while a commit
/// is in flight are stored together by the next one, and each returns once its
/// own write is committed.
/// Each operation also has an `async` form that runs the blocking work on a
/// dedicated dispatch queue, never on Swift's cooperative thread pool.
public final class DiskCache<Value: Sendable>: Sendable {
    /// The settings of a disk cache: ``DiskCacheConfiguration``.
    public typealias Configuration = DiskCacheConfiguration

    /// The engine: the only owner of the lock, the storage and the limits.
    let core: DiskCacheCore<Value>

    /// Opens the cache in `directory`, creating it (mode 0700) if needed.
    ///
    /// Opening costs the same for any number of entries: it does not scan the
    /// data directory. A consistency check then runs in the background and
    /// repairs orphan files and rows whose file is missing.
    ///
    /// - Parameters:
    ///   - directory: The cache's directory.
    ///   - codec: How values become bytes.
    ///   - configuration: Where values go, the limits, the background trim, the
    ///     clock and the logger. Defaults to ``DiskCacheConfiguration/init(storage:countLimit:sizeLimit:ageLimit:freeDiskSpaceLimit:autoTrimInterval:clock:logger:)``
    ///     with its defaults: no limits, a trim every 60 seconds, the wall clock.
    ///     Negative limits are treated as 0, with a warning.
    /// - Throws: ``StashError`` with ``StashError/Code/directoryUnusable`` if the
    ///   directory cannot be created or used, ``StashError/Code/databaseFailed``
    ///   if SQLite fails for another reason than damage.
    /// - Complexity: O(1) in the number of entries. Blocks on disk I/O.
    public init(
        directory: String, codec: DiskCodec<Value>, configuration: Configuration = Configuration()
    ) throws(StashError) {
        core = try DiskCacheCore(directory: directory, codec: codec, configuration: configuration)
    }

    /// Opens the cache in `directory` with a size limit and otherwise the
    /// defaults of ``Configuration``: the common case.
    ///
    /// - Parameters:
    ///   - directory: The cache's directory, created if missing.
    ///   - codec: How values become bytes.
    ///   - sizeLimit: The most bytes of values. Strict.
    ///   - ageLimit: How long after its last write an entry expires. Strict.
    ///     Defaults to `nil`: never.
    /// - Throws: As ``init(directory:codec:configuration:)``.
    /// - Complexity: O(1) in the number of entries. Blocks on disk I/O.
    public convenience init(directory: String, codec: DiskCodec<Value>, sizeLimit: Int, ageLimit: Duration? = nil) throws(StashError) {
        try self.init(directory: directory, codec: codec, configuration: Configuration(sizeLimit: sizeLimit, ageLimit: ageLimit))
    }

    /// The cache's directory.
    ///
    /// - Complexity: O(1). Thread-safe.
    public var directory: String { core.directory }

    // MARK: - Reading

    /// The value stored for `key`, or `nil` if there is none, it has expired, or
    /// its bytes cannot be decoded (the entry is then removed and the failure logged).
    ///
    /// Counted in ``statistics`` as a hit or a miss.
    ///
    /// - Throws: ``StashError``: ``StashError/Code/invalidKey`` for an empty key;
    ///   ``StashError/Code/databaseFailed`` or ``StashError/Code/ioFailed`` when
    ///   the disk fails; ``StashError/Code/closed`` after `close()`.
    /// - Complexity: One indexed `SELECT`, O(log n), plus reading the value.
    ///   Blocks on disk I/O. Thread-safe.
    public func value(forKey key: String) throws(StashError) -> Value? {
        try core.value(forKey: key)
    }

    /// `value(forKey:)`, with the value's encoded size and expiration, for ``Cache``.
    func valueWithMetadata(forKey key: String) throws(StashError) -> DiskCacheHit<Value>? {
        try core.valueWithMetadata(forKey: key)
    }

    /// ``valueWithMetadata(forKey:)`` settled on the caller's thread when it can be: a lookup on
    /// a reader of the pool, blocking on no lock of the cache's and reading no file; `.needsIOQueue`
    /// otherwise, having counted nothing. For `Cache`'s async read of a disk hit without a hop to
    /// the I/O queue.
    ///
    /// - Complexity: One indexed `SELECT`. Thread-safe.
    func valueWithMetadataOnCallerThread(forKey key: String) throws(StashError) -> DiskCallerThreadRead<DiskCacheHit<Value>> {
        try core.valueWithMetadataOnCallerThread(forKey: key)
    }

    /// Whether the cache holds a fresh value for `key`. Does not count as an access
    /// for LRU, nor as a lookup in ``statistics``.
    ///
    /// - Throws: As `value(forKey:)`.
    /// - Complexity: One indexed `SELECT`. Blocks on disk I/O. Thread-safe.
    public func contains(_ key: String) throws(StashError) -> Bool {
        try core.contains(key)
    }

    /// The extended data stored beside `key`'s value, or `nil` if there is none
    /// or there is no fresh value.
    ///
    /// - Throws: As `value(forKey:)`.
    /// - Complexity: One indexed `SELECT`. Blocks on disk I/O. Thread-safe.
    public func extendedData(forKey key: String) throws(StashError) -> Data? {
        try core.extendedData(forKey: key)
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
    ///   ``StashError/Code/closed`` after `close()`.
    /// - Complexity: One transaction (shared with the writes of other threads that
    ///   arrive while a commit is in flight), plus writing a file for a large
    ///   value. Blocks on disk I/O, and while another thread's commit is in
    ///   flight. Thread-safe.
    public func setValue(_ value: Value, forKey key: String, ttl: Duration? = nil, extendedData: Data? = nil) throws(StashError) {
        _ = try core.setValue(value, forKey: key, ttl: ttl, extendedData: extendedData)
    }

    /// `setValue(_:forKey:ttl:extendedData:)`, returning the encoded size: the
    /// default memory cost in ``Cache``.
    func setValueReturningSize(_ value: Value, forKey key: String, ttl: Duration?) throws(StashError) -> Int {
        try core.setValue(value, forKey: key, ttl: ttl, extendedData: nil)
    }

    /// Writes `values` in one transaction, for ``Cache/setValues(_:ttl:)``: per value, in order,
    /// its encoded size once stored, else its error (a value fails alone, unless the transaction
    /// does). Blocks on disk I/O.
    func setValuesReturningSizes(_ values: [(key: String, value: Value)], ttl: Duration?) -> [Result<Int, StashError>] {
        core.setValues(values, ttl: ttl)
    }

    /// Throws ``StashError/Code/invalidKey`` for a key the disk tier refuses (the
    /// empty key), so that a memory-only ``Cache`` refuses the same keys.
    static func validate(_ key: String) throws(StashError) {
        try KVStorage.validate(key)
    }

    /// Removes the value for `key`.
    ///
    /// - Returns: Whether there was a value to remove.
    /// - Throws: ``StashError``: ``StashError/Code/invalidKey`` for an empty key,
    ///   or a disk failure (nothing is changed then).
    /// - Complexity: One transaction. Blocks on disk I/O. Thread-safe.
    @discardableResult
    public func removeValue(forKey key: String) throws(StashError) -> Bool {
        try core.removeValue(forKey: key)
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
        try core.removeAll(progress: { _, _ in })
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
        try core.removeAll(progress: progress)
    }

    // MARK: - Size and statistics

    /// The number of entries, including expired ones not yet trimmed.
    ///
    /// - Throws: ``StashError`` on a disk failure.
    /// - Complexity: O(1): kept in the manifest. Blocks on disk I/O. Thread-safe.
    public var count: Int {
        get throws(StashError) { try core.count() }
    }

    /// The total size of the stored values, in bytes.
    ///
    /// - Throws: ``StashError`` on a disk failure.
    /// - Complexity: O(1): kept in the manifest. Blocks on disk I/O. Thread-safe.
    public var totalSize: Int {
        get throws(StashError) { try core.totalSize() }
    }

    /// This instance's lookup counters since it opened: hits and misses of
    /// `value(forKey:)`, and evictions (entries removed by a limit, a trim or
    /// expiry; removals by the caller are not counted). In memory only: other
    /// instances and processes sharing the directory keep their own.
    ///
    /// - Complexity: O(1). Never blocks on disk I/O. Thread-safe.
    public var statistics: CacheStatistics {
        core.statistics()
    }

    // MARK: - Lifecycle

    /// Writes pending last-access times to the manifest now.
    ///
    /// - Throws: ``StashError`` on a disk failure.
    /// - Complexity: One transaction. Blocks on disk I/O. Thread-safe.
    public func flush() throws(StashError) {
        try core.flush()
    }

    /// Saves pending access times and closes the manifest. Every later call
    /// throws ``StashError/Code/closed``. Also done when the cache is deallocated.
    ///
    /// If the background consistency check that follows opening is still running,
    /// waits for it to finish first, so that nothing uses the directory once this
    /// returns: close a cache before deleting its directory.
    ///
    /// - Complexity: One transaction, plus the rest of a consistency check under
    ///   way (O(n)). Blocks on disk I/O. Thread-safe.
    public func close() {
        core.close()
    }

    /// The cache clock's reading now, for ``Cache``'s promotions.
    var nanosecondsNow: Int64 { core.nanosecondsNow }

    /// The clock and the logger of the cache, for a ``Cache`` built on it.
    var clock: any CacheClock { core.clock }
    var logger: Logger { core.logger }

    /// Runs `body` on the cache's I/O queue, off Swift's cooperative pool: the
    /// async forms of this cache's and ``Cache``'s operations.
    func run<Result: Sendable>(_ body: @escaping @Sendable () throws(StashError) -> Result) async throws(StashError) -> Result {
        try await core.run(body)
    }

    /// Blocks until the background work queued so far has finished: the
    /// consistency check that follows opening, emptying the trash, a background
    /// trim under way. For tests and tools that must see the cache at rest.
    ///
    /// - Complexity: As the work it waits for (a consistency check is O(n)).
    package func waitForBackgroundWork() {
        core.waitForBackgroundWork()
    }
}

extension DiskCache where Value == Data {
    /// Opens a cache of raw bytes in `directory`. See ``init(directory:codec:configuration:)``.
    ///
    /// - Throws: As the designated initialiser.
    /// - Complexity: O(1) in the number of entries. Blocks on disk I/O.
    public convenience init(directory: String, configuration: Configuration = Configuration()) throws(StashError) {
        try self.init(directory: directory, codec: .data, configuration: configuration)
    }

    /// Opens a cache of raw bytes in `directory` with a size limit. See
    /// ``init(directory:codec:sizeLimit:ageLimit:)``.
    ///
    /// - Throws: As the designated initialiser.
    /// - Complexity: O(1) in the number of entries. Blocks on disk I/O.
    public convenience init(directory: String, sizeLimit: Int, ageLimit: Duration? = nil) throws(StashError) {
        try self.init(directory: directory, codec: .data, sizeLimit: sizeLimit, ageLimit: ageLimit)
    }
}
