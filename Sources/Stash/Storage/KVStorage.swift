// KVStorage: the disk engine under `DiskCache`.
//
// On-disk layout, one directory per cache:
//
//     <directory>/                 mode 0700
//       manifest.sqlite            SQLite database (WAL mode), one row per entry; mode 0600
//       manifest.sqlite-wal        its write-ahead log
//       manifest.sqlite-shm        its shared-memory index
//       recovery.lock              flock'd while a damaged manifest is being set aside
//       data/                      one file per value stored outside the manifest; mode 0700
//         3f9c…e1                  32 hex digits, random, never derived from the key; 0600
//       trash/                     directories and files waiting to be deleted by emptyTrash()
//       manifest.sqlite.corrupt-…  the last damaged manifest, kept aside for inspection
//
// A value lives either inline in its manifest row (`inline_data`) or in a file in
// `data/` named by the row's `filename` column; which one is decided per write by
// the storage kind (see DiskStorageKind). The schema is described in Manifest.swift.
//
// Writing a file value: write `data/<fresh name>` (O_CREAT|O_EXCL|O_NOFOLLOW, 0600),
// then upsert the row in one transaction. No row names the file until that commit,
// so the commit publishes it atomically: a row never points to a partial file, a
// reader never sees torn bytes, and a crash leaves at worst an unreferenced file that
// checkConsistency() removes. (The classic write-to-a-temporary-name-then-rename
// protocol exists for stores that find files by name; here the manifest does, and
// the rename would cost a system call for nothing.) A replaced value's old file is
// deleted only after the new row has committed.
//
// Times are Int64 nanoseconds read from the injected CacheClock (DiskCache passes
// WallClock, so they are nanoseconds since the Unix epoch and survive restarts).

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

import CSQLite
import Logging

/// Tunables of a ``KVStorage``. Every property has a default suited to a cache.
struct KVStorageOptions: Sendable {
    /// How long SQLite retries when another connection or process holds the
    /// database lock, before the operation fails with
    /// ``StashError/Code/databaseFailed``. Default: 5 seconds.
    var busyTimeout: Duration = .seconds(5)

    /// Whether writes are made durable before they are acknowledged. Default: `false`.
    ///
    /// When `false` (a cache's usual trade-off), a file value is not `fsync`ed and
    /// SQLite runs with `synchronous = NORMAL`: a power loss can lose the most
    /// recent writes, but a process crash never yields torn bytes, because a row is
    /// committed only after its file was completely written and closed; a reader
    /// also checks the file's size against the row.
    /// When `true`, each file and the `data/` directory are `fsync`ed before the
    /// row is committed, and SQLite runs with `synchronous = FULL`.
    var synchronous = false

    /// How many reads may accumulate unflushed last-access times before a read
    /// flushes them itself. Default: 1,024. The owner normally flushes earlier with
    /// ``KVStorage/flushAccessTimes()``.
    var accessFlushThreshold = 1024

    /// How old (by the file's modification time, on the wall clock) a file in
    /// `data/` must be before ``KVStorage/checkConsistency()`` treats it as an
    /// orphan. Protects another process's file that is still being written or whose
    /// row is not yet committed. Default: 1 hour.
    var orphanGracePeriod: Duration = .seconds(3600)

    /// How many rows one trim transaction removes before releasing the write lock
    /// to other connections. Default: 256.
    var trimBatchSize = 256
}

/// The disk storage engine: a key-value store of byte values, each with optional
/// extended data, an expiration time and access times, kept in one directory.
///
/// The layout on disk and the write protocol are described at the top of this
/// file. The `DiskCache` facade builds typed, thread-safe caching on top of it.
///
/// - Important: NOT thread-safe. Every method (except the ``trash``'s
///   ``Trash/empty()``) must be called with the owner's lock held, one call at a
///   time. Several `KVStorage` instances, in one process or several, may share one
///   directory: SQLite's locking and the write protocol keep it consistent.
///
/// Keys are any non-empty `String`, compared by their exact UTF-8 bytes (so two
/// canonically equivalent spellings such as precomposed "é" and "e" + U+0301 would
/// be different keys here; ``DiskCache`` normalises keys to NFC first, so that
/// its keys compare as Swift's `String`s do). They never appear in file names.
///
/// Errors: every failure is a ``StashError``; a miss is `nil`, never an error.
/// A damaged manifest is set aside, logged, and replaced by an empty one: reads
/// then miss and writes that were under way throw ``StashError/Code/corrupted``;
/// the next operations work normally.
final class KVStorage {
    /// An entry read back from the storage.
    struct Item {
        /// The value's bytes.
        var value: Data
        /// The value's length in bytes (the row's `size`).
        var size: Int
        /// Whether the value is stored inline in the manifest rather than in a file.
        var isInline: Bool
        /// When the value was written, in nanoseconds on the storage's clock.
        var modificationTime: Int64
        /// When the entry expires, or `nil` if it never does.
        var expirationTime: Int64?
    }

    /// The cache's count and byte size, as `manifest_totals` holds them.
    struct Totals: Equatable {
        var count: Int
        var size: Int
        var fileCount: Int
    }

    /// The cache directory.
    let directory: String
    /// `<directory>/manifest.sqlite`.
    let manifestPath: String
    /// `<directory>/data`.
    let dataPath: String
    /// The trash, which an owner may empty on another thread.
    let trash: Trash
    /// Where new values go.
    let kind: DiskStorageKind
    /// The source of every time the storage records.
    let clock: any CacheClock
    /// Where recoveries and repairs are reported.
    let logger: Logger
    /// The tunables.
    let options: KVStorageOptions

    /// The open manifest; `nil` after ``close()``, or after a recovery that could
    /// not reopen it (the next operation tries again).
    var connection: SQLiteConnection?
    /// Set by ``close()``: every later call throws ``StashError/Code/closed``.
    var isClosed = false
    /// The manifest file this instance opened, to notice when another instance has
    /// set it aside and replaced it.
    var manifestIdentity: FileSystem.Identity?
    /// The kept descriptor of `data/`, opened on first use; see KVStorage+Files.swift.
    var openDataDirectory: DataDirectory?
    /// Names for new value files.
    var fileNames = FileNameGenerator()
    /// Last-access times of reads not yet written to the manifest.
    var pendingAccessTimes: [String: Int64] = [:]
    /// The totals last read, valid while ``cachedTotalsVersion`` is the
    /// connection's `data_version` and this instance has not written since.
    var cachedTotals: Totals?
    /// The `PRAGMA data_version` at which ``cachedTotals`` was read.
    var cachedTotalsVersion: Int64 = 0

    /// Opens the storage in `directory`, creating the directory (and its parents)
    /// if needed.
    ///
    /// Opening does not scan `data/` and runs no O(n) check of the manifest, so it
    /// costs the same for any number of entries. A manifest that is not a database,
    /// is damaged in its header or schema, or has a newer schema version, is set
    /// aside (logged as an error) and replaced by an empty one.
    ///
    /// - Parameters:
    ///   - directory: The cache directory. Created with mode 0700 if missing. May be
    ///     a symbolic link to a directory; entries inside it never are followed.
    ///   - kind: Where new values are stored. Defaults to ``DiskStorageKind/default``.
    ///   - clock: The source of modification, access and expiration times. The
    ///     facade passes ``WallClock``; tests pass a ``ManualClock``.
    ///   - logger: Where damage, recoveries and repairs are reported.
    ///   - options: Tunables. Defaults to ``KVStorageOptions/init()``.
    /// - Throws: ``StashError``: `.invalidArgument` for a negative inline threshold
    ///   or nonsensical option; `.directoryUnusable` if the directory cannot be
    ///   created or is not a directory; `.databaseFailed` if SQLite fails for a
    ///   reason other than damage (e.g. the database stayed locked past the busy timeout).
    init(
        directory: String,
        kind: DiskStorageKind = .default,
        clock: any CacheClock,
        logger: Logger,
        options: KVStorageOptions = KVStorageOptions()
    ) throws(StashError) {
        if case .mixed(let threshold) = kind, threshold < 0 {
            throw StashError(.invalidArgument, "the inline threshold must not be negative (got \(threshold))")
        }
        guard options.trimBatchSize > 0, options.accessFlushThreshold > 0, options.busyTimeout >= .zero,
              options.orphanGracePeriod >= .zero
        else {
            throw StashError(.invalidArgument, "storage options must be positive: \(options)")
        }
        guard !directory.isEmpty else {
            throw StashError(.directoryUnusable, "the cache directory path is empty")
        }
        var directory = directory
        while directory.count > 1 && directory.hasSuffix("/") { directory.removeLast() }
        self.directory = directory
        manifestPath = "\(directory)/\(Manifest.fileName)"
        dataPath = "\(directory)/data"
        var logger = logger
        logger[metadataKey: "stash.directory"] = "\(directory)"
        self.logger = logger
        trash = Trash(path: "\(directory)/trash", logger: logger)
        self.kind = kind
        self.clock = clock
        self.options = options

        try openManifest()
    }

    deinit {
        close()
    }

    /// Flushes pending access times (a failure is logged), finalizes every
    /// statement and closes the manifest. Idempotent; every later call throws
    /// ``StashError/Code/closed``.
    func close() {
        guard !isClosed else { return }
        // If the manifest was replaced or deleted meanwhile, the pending times are for
        // entries that are gone: do not recreate a removed cache just to save them.
        if !pendingAccessTimes.isEmpty, manifestIsCurrent() {
            do {
                try flushAccessTimes()
            } catch {
                logger.warning("could not save access times on close", metadata: ["error": "\(error)"])
            }
        }
        connection?.close()
        connection = nil
        forgetDataDirectory()
        isClosed = true
    }

    // MARK: - Errors and the connection

    /// A key shortened for messages: keys may be megabytes long.
    static func describe(_ key: String) -> String {
        let limit = 64
        if key.utf8.count <= limit { return "\"\(key)\"" }
        return "\"\(key.prefix(limit))…\" (\(key.utf8.count) bytes)"
    }

    /// Throws ``StashError/Code/invalidKey`` for an empty key.
    static func validate(_ key: String) throws(StashError) {
        if key.isEmpty {
            throw StashError(.invalidKey, "keys must not be empty")
        }
    }

    /// The open connection, reopening the manifest if a recovery left none.
    func requireConnection() throws(StashError) -> SQLiteConnection {
        if isClosed {
            throw StashError(.closed, "the disk storage at \(directory) is closed")
        }
        if let connection { return connection }
        try openManifest()
        guard let connection else {
            throw StashError(.databaseFailed, "the manifest at \(manifestPath) could not be reopened")
        }
        return connection
    }

    /// Runs `body` against the connection, turning a ``SQLiteError`` into a
    /// ``StashError`` and recovering from corruption (see
    /// ``handleDatabaseError(_:while:)``).
    ///
    /// - Parameter action: What is being done, for messages ("reading \"key\"").
    func perform<Result>(
        _ action: @autoclosure () -> String,
        _ body: (SQLiteConnection) throws(SQLiteError) -> Result
    ) throws(StashError) -> Result {
        let connection = try requireConnection()
        do throws(SQLiteError) {
            return try body(connection)
        } catch {
            throw handleDatabaseError(error, while: action())
        }
    }

    /// Maps a SQLite failure to the error to throw.
    ///
    /// Corruption (`SQLITE_CORRUPT`, `SQLITE_NOTADB`) sets the manifest aside and
    /// starts an empty one, then yields ``StashError/Code/corrupted``.
    /// `SQLITE_TOOBIG` yields ``StashError/Code/valueTooLarge``. Anything else,
    /// including busy and locked, yields ``StashError/Code/databaseFailed`` and
    /// changes nothing on disk.
    func handleDatabaseError(_ error: SQLiteError, while action: String) -> StashError {
        if error.isCorruption {
            recoverFromCorruption(error, while: action)
            return StashError(
                .corrupted,
                "the cache manifest was found damaged while \(action); it was set aside and the cache restarted empty",
                cause: error
            )
        }
        if error.resultCode == SQLITE_TOOBIG {
            return StashError(.valueTooLarge, "SQLite's length limit was exceeded while \(action)", cause: error)
        }
        // Name the problem in the message itself ("database or disk is full"), not
        // only in the cause.
        return StashError(.databaseFailed, "SQLite failed while \(action): \(error.message)", cause: error)
    }

    // MARK: - Writing

    /// Stores `value` under `key`, replacing any previous entry.
    ///
    /// The value goes inline or to a new file according to ``kind``. The entry's
    /// modification and last-access times are now; a pending access time for the key
    /// is dropped. When replacing a file value, the old file is deleted only after
    /// the new row has committed, so a failure keeps the old value intact.
    ///
    /// - Parameters:
    ///   - value: The bytes to store. Bound to SQLite without a copy when inline.
    ///   - key: A non-empty key.
    ///   - expiration: When the entry expires, in nanoseconds on ``clock``; `nil`
    ///     (the default) for never. A time at or before now makes the entry
    ///     immediately expired.
    ///   - extendedData: Opaque bytes stored beside the value; `nil` by default.
    /// - Throws: ``StashError``: `.invalidKey` for an empty key; `.valueTooLarge`
    ///   past SQLite's limit for an inline value; `.ioFailed` if the file cannot be
    ///   written; `.databaseFailed` if the row cannot be committed (nothing changes
    ///   then); `.corrupted` if the manifest was found damaged (it is reset and the
    ///   value not stored); `.closed` after ``close()``.
    func setValue(_ value: Data, forKey key: String, expiration: Int64? = nil, extendedData: Data? = nil) throws(StashError) {
        try Self.validate(key)
        let connection = try requireWritableConnection()
        let isInline = kind.storesInline(size: value.count)
        if isInline, value.count > connection.maximumLength {
            throw StashError(
                .valueTooLarge,
                "a value of \(value.count) bytes exceeds SQLite's limit of \(connection.maximumLength) for key \(Self.describe(key))"
            )
        }
        let now = clock.nanosecondsNow

        // A file can vanish between its rename and the commit (another instance's
        // removeAll() moved data/ away, or a consistency check deleted it): the
        // check inside the transaction notices, and the file is written again.
        let maximumAttempts = 3
        for attempt in 1...maximumAttempts {
            var file: DataFile?
            if !isInline {
                file = try writeDataFile(value, forKey: key)
            }
            let outcome: UpsertOutcome
            do throws(SQLiteError) {
                outcome = try connection.transaction { () throws(SQLiteError) -> UpsertOutcome in
                    if let file, !isLive(file) {
                        return .fileLost
                    }
                    var totals = Manifest.TotalsChange()
                    let previousFilename = try connection.withStatement(Manifest.SQL.selectPrevious) { statement throws(SQLiteError) in
                        try statement.bind(key, at: 1)
                        guard try statement.step() == .row else { return nil as String? }
                        totals.remove(returnedBy: statement)
                        return statement.text(at: 0)
                    }
                    totals.add(size: value.count, hasFile: file != nil)
                    try upsert(
                        connection, key: key, filename: file?.name, value: isInline ? value : nil, size: value.count,
                        now: now, expiration: expiration, extendedData: extendedData
                    )
                    try applyTotals(connection, totals)
                    return .stored(previousFilename: previousFilename)
                }
            } catch {
                if let file { removeDataFile(file.name) }
                throw handleDatabaseError(error, while: "storing \(Self.describe(key))")
            }
            switch outcome {
            case .stored(let previousFilename):
                pendingAccessTimes[key] = nil
                if let previousFilename, previousFilename != file?.name {
                    removeDataFile(previousFilename)
                }
                return
            case .fileLost:
                logger.notice(
                    "a value's file vanished before its row was committed; writing it again",
                    metadata: ["key": "\(Self.describe(key))", "attempt": "\(attempt)"]
                )
            }
        }
        throw StashError(
            .ioFailed,
            "the file for \(Self.describe(key)) kept disappearing from \(dataPath) before it could be recorded"
        )
    }

    /// What the write transaction of ``setValue(_:forKey:expiration:extendedData:)`` did.
    private enum UpsertOutcome {
        /// The row was written; the replaced row's file, if any, is now unreferenced.
        case stored(previousFilename: String?)
        /// The new file was no longer in `data/`; nothing was written.
        case fileLost
    }

    /// Inserts or replaces the row for `key`, binding the value and extended data
    /// without copying them.
    private func upsert(
        _ connection: SQLiteConnection, key: String, filename: String?, value: Data?, size: Int,
        now: Int64, expiration: Int64?, extendedData: Data?
    ) throws(SQLiteError) {
        try connection.withStatement(Manifest.SQL.upsert) { statement throws(SQLiteError) in
            try statement.bind(key, at: 1)
            try statement.bind(filename, at: 2)
            try statement.bind(Int64(size), at: 3)
            try statement.bind(now, at: 5)
            try statement.bind(expiration, at: 6)
            try withBytes(of: value) { valueBytes throws(SQLiteError) in
                try withBytes(of: extendedData) { extendedBytes throws(SQLiteError) in
                    if let valueBytes { try statement.bindStatic(valueBytes, at: 4) } else { try statement.bindNull(at: 4) }
                    if let extendedBytes { try statement.bindStatic(extendedBytes, at: 7) } else { try statement.bindNull(at: 7) }
                    // Step while the buffers are valid; withStatement clears the bindings after.
                    try statement.step()
                }
            }
        }
    }

    // MARK: - Reading

    /// The entry for `key`, or `nil` if there is none.
    ///
    /// One indexed `SELECT`, plus one file read for a file value. The read does not
    /// write to the manifest: its access time is kept in memory until
    /// ``flushAccessTimes()`` (or until ``KVStorageOptions/accessFlushThreshold``
    /// reads accumulate). Exceptions, each logged or obvious:
    /// - an expired entry is a miss and is removed;
    /// - an entry whose file is missing, truncated, replaced by a link or not a
    ///   regular file is a miss and is removed (a link is removed as a link, its
    ///   target is never opened);
    /// - a damaged manifest is set aside and the read is a miss.
    ///
    /// - Complexity: O(log n) in the number of entries, plus O(size) to copy the value.
    /// - Throws: ``StashError``: `.invalidKey` for an empty key; `.databaseFailed`
    ///   if SQLite fails (e.g. locked past the busy timeout); `.ioFailed` if the
    ///   value's file exists but cannot be read (e.g. too many open files);
    ///   `.closed` after ``close()``.
    func value(forKey key: String) throws(StashError) -> Item? {
        try Self.validate(key)
        // Two passes: if the file looked damaged but the row changed meanwhile
        // (another instance replaced the value), read the new row.
        for _ in 0..<2 {
            let now = clock.nanosecondsNow
            let row: Row?
            do {
                row = try perform("reading \(Self.describe(key))") { connection throws(SQLiteError) in
                    try connection.withStatement(Manifest.SQL.selectItem) { statement throws(SQLiteError) -> Row? in
                        try statement.bind(key, at: 1)
                        guard try statement.step() == .row else { return nil }
                        return Row(
                            filename: statement.text(at: 0),
                            size: Int(statement.int64(at: 1)),
                            inlineData: statement.blob(at: 2),
                            modificationTime: statement.int64(at: 3),
                            expirationTime: statement.optionalInt64(at: 4)
                        )
                    }
                }
            } catch where error.code == .corrupted {
                return nil
            }
            guard let row else { return nil }

            if let expiration = row.expirationTime, expiration <= now {
                removeAfterMiss("expired") { () throws(StashError) in try removeExpiredEntry(key, now: now) }
                return nil
            }

            let value: Data
            if let filename = row.filename {
                switch try readDataFile(filename, expectedSize: row.size, forKey: key) {
                case .success(let bytes):
                    value = bytes
                case .damaged(let reason):
                    logger.warning(
                        "a value's file is damaged; dropping the entry",
                        metadata: ["key": "\(Self.describe(key))", "file": "\(filename)", "reason": "\(reason)"]
                    )
                    var removed = true
                    removeAfterMiss("damaged") { () throws(StashError) in
                        removed = try removeDamagedEntry(key, filename: filename)
                    }
                    removeDataFile(filename)
                    if removed { return nil }
                    continue  // the row changed under us: look again
                }
            } else {
                let bytes = row.inlineData ?? Data()
                guard bytes.count == row.size else {
                    logger.warning(
                        "an inline value has the wrong length; dropping the entry",
                        metadata: ["key": "\(Self.describe(key))", "expected": "\(row.size)", "actual": "\(bytes.count)"]
                    )
                    removeAfterMiss("damaged") { () throws(StashError) in
                        _ = try removeDamagedInlineEntry(key, size: row.size)
                    }
                    return nil
                }
                value = bytes
            }

            recordAccess(key, at: now)
            return Item(
                value: value, size: row.size, isInline: row.filename == nil,
                modificationTime: row.modificationTime, expirationTime: row.expirationTime
            )
        }
        return nil
    }

    /// Runs the clean-up that follows a miss (removing an expired or damaged entry).
    /// A failure (say, the database stayed locked) is logged, not thrown: the read
    /// is a miss either way, and the entry is removed by a later read or trim.
    private func removeAfterMiss(_ what: String, _ body: () throws(StashError) -> Void) {
        do {
            try body()
        } catch {
            logger.notice("could not remove a \(what) entry after a miss", metadata: ["error": "\(error)"])
        }
    }

    /// One manifest row as ``value(forKey:)`` reads it.
    private struct Row {
        var filename: String?
        var size: Int
        var inlineData: Data?
        var modificationTime: Int64
        var expirationTime: Int64?
    }

    /// Whether an unexpired entry exists for `key`. Does not count as an access and
    /// does not open the value's file (a damaged file is found by the next read).
    ///
    /// - Complexity: O(log n).
    /// - Throws: ``StashError``: `.invalidKey`, `.databaseFailed`, `.closed`.
    func contains(_ key: String) throws(StashError) -> Bool {
        try Self.validate(key)
        let now = clock.nanosecondsNow
        do {
            return try perform("looking up \(Self.describe(key))") { connection throws(SQLiteError) in
                try connection.withStatement(Manifest.SQL.selectExpiration) { statement throws(SQLiteError) in
                    try statement.bind(key, at: 1)
                    guard try statement.step() == .row else { return false }
                    guard let expiration = statement.optionalInt64(at: 0) else { return true }
                    return expiration > now
                }
            }
        } catch where error.code == .corrupted {
            return false
        }
    }

    /// The extended data stored with `key`'s unexpired entry, or `nil` if there is
    /// no such entry or it has no extended data. Does not count as an access.
    ///
    /// - Complexity: O(log n) plus the data's length.
    /// - Throws: ``StashError``: `.invalidKey`, `.databaseFailed`, `.closed`.
    func extendedData(forKey key: String) throws(StashError) -> Data? {
        try Self.validate(key)
        let now = clock.nanosecondsNow
        do {
            return try perform("reading extended data of \(Self.describe(key))") { connection throws(SQLiteError) in
                try connection.withStatement(Manifest.SQL.selectExtendedData) { statement throws(SQLiteError) -> Data? in
                    try statement.bind(key, at: 1)
                    guard try statement.step() == .row else { return nil }
                    if let expiration = statement.optionalInt64(at: 0), expiration <= now { return nil }
                    return statement.blob(at: 1)
                }
            }
        } catch where error.code == .corrupted {
            return nil
        }
    }

    // MARK: - Removing

    /// Removes the entry for `key`, deleting its file after the row is gone.
    ///
    /// - Returns: `true` if there was an entry (expired or not), `false` otherwise.
    /// - Complexity: O(log n).
    /// - Throws: ``StashError``: `.invalidKey`, `.databaseFailed`, `.closed`.
    @discardableResult
    func removeValue(forKey key: String) throws(StashError) -> Bool {
        try Self.validate(key)
        _ = try requireWritableConnection()
        pendingAccessTimes[key] = nil
        let result: (removed: Bool, filename: String?)
        do {
            result = try perform("removing \(Self.describe(key))") { connection throws(SQLiteError) in
                try deleteReturningFilename(connection, Manifest.SQL.deleteKey) { statement throws(SQLiteError) in
                    try statement.bind(key, at: 1)
                }
            }
        } catch where error.code == .corrupted {
            return false
        }
        if let filename = result.filename { removeDataFile(filename) }
        return result.removed
    }

    /// Removes `key`'s entry if it is still expired at `now` (another instance may
    /// have replaced it since it was read), deleting its file afterwards.
    func removeExpiredEntry(_ key: String, now: Int64) throws(StashError) {
        pendingAccessTimes[key] = nil
        let filename: String?
        do {
            filename = try perform("removing expired \(Self.describe(key))") { connection throws(SQLiteError) in
                try deleteReturningFilename(connection, Manifest.SQL.deleteExpiredKey) { statement throws(SQLiteError) in
                    try statement.bind(key, at: 1)
                    try statement.bind(now, at: 2)
                }.filename
            }
        } catch where error.code == .corrupted {
            return
        }
        if let filename { removeDataFile(filename) }
    }

    /// Removes `key`'s entry if it still refers to `filename`.
    ///
    /// - Returns: Whether the row was removed (`false`: the entry changed or vanished).
    func removeDamagedEntry(_ key: String, filename: String) throws(StashError) -> Bool {
        try removeDamagedRow(key, Manifest.SQL.deleteKeyWithFile) { statement throws(SQLiteError) in
            try statement.bind(filename, at: 2)
        }
    }

    /// Removes `key`'s inline entry if it is still inline with the damaged `size`.
    ///
    /// - Returns: Whether the row was removed (`false`: the entry changed or vanished).
    func removeDamagedInlineEntry(_ key: String, size: Int) throws(StashError) -> Bool {
        try removeDamagedRow(key, Manifest.SQL.deleteInlineKey) { statement throws(SQLiteError) in
            try statement.bind(Int64(size), at: 2)
        }
    }

    /// Runs `sql`, a `DELETE` of `key`'s row (parameter 1) under a condition that
    /// `bindCondition` binds, so that a row another instance replaced meanwhile is
    /// kept. A manifest found damaged counts as removed: it was reset.
    private func removeDamagedRow(
        _ key: String, _ sql: StaticString, bindCondition: (SQLiteStatement) throws(SQLiteError) -> Void
    ) throws(StashError) -> Bool {
        pendingAccessTimes[key] = nil
        do {
            return try perform("removing damaged \(Self.describe(key))") { connection throws(SQLiteError) in
                try deleteReturningFilename(connection, sql) { statement throws(SQLiteError) in
                    try statement.bind(key, at: 1)
                    try bindCondition(statement)
                }.removed
            }
        } catch where error.code == .corrupted {
            return true
        }
    }

    /// In one transaction, runs `sql`, a `DELETE` of at most one row returning
    /// (filename, size), after `bind` has bound its parameters, and takes the
    /// removed row off the totals.
    ///
    /// - Returns: Whether a row was removed, and its file, if it had one.
    private func deleteReturningFilename(
        _ connection: SQLiteConnection, _ sql: StaticString, bind: (SQLiteStatement) throws(SQLiteError) -> Void
    ) throws(SQLiteError) -> (removed: Bool, filename: String?) {
        try connection.transaction { () throws(SQLiteError) in
            var totals = Manifest.TotalsChange()
            let result = try connection.withStatement(sql) { statement throws(SQLiteError) -> (removed: Bool, filename: String?) in
                try bind(statement)
                guard try statement.step() == .row else { return (false, nil) }
                totals.remove(returnedBy: statement)
                let filename = statement.text(at: 0)
                while try statement.step() == .row {}
                return (true, filename)
            }
            try applyTotals(connection, totals)
            return result
        }
    }

    // MARK: - Totals

    /// The number of entries, expired ones included until they are removed.
    ///
    /// - Complexity: O(1): a counter every write keeps in the manifest, cached
    ///   in memory while `PRAGMA data_version` shows no other connection committed.
    /// - Throws: ``StashError``: `.databaseFailed`, `.closed`.
    func totalCount() throws(StashError) -> Int {
        try totals().count
    }

    /// The sum of the entries' value sizes in bytes (keys and extended data are
    /// not counted).
    ///
    /// - Complexity: O(1), as ``totalCount()``.
    /// - Throws: ``StashError``: `.databaseFailed`, `.closed`.
    func totalSize() throws(StashError) -> Int {
        try totals().size
    }

    // Every write this instance makes to `manifest_totals` goes through the next
    // three functions, which also forget ``cachedTotals``: so its own writes never
    // leave a stale count in memory (other connections' commits show in
    // `PRAGMA data_version`). Each runs within the caller's transaction.

    /// Applies `change` to `manifest_totals`. An empty change writes nothing.
    func applyTotals(_ connection: SQLiteConnection, _ change: Manifest.TotalsChange) throws(SQLiteError) {
        guard change != Manifest.TotalsChange() else { return }
        cachedTotals = nil
        try Manifest.adjustTotals(connection, by: change)
    }

    /// Sets `manifest_totals` to zero, once every row is deleted.
    func setTotalsToZero(_ connection: SQLiteConnection) throws(SQLiteError) {
        cachedTotals = nil
        try Manifest.setTotalsToZero(connection)
    }

    /// Recounts `manifest_totals` from the rows; whether the stored totals were wrong.
    func recountTotals(_ connection: SQLiteConnection) throws(SQLiteError) -> Bool {
        cachedTotals = nil
        return try Manifest.recountTotals(connection).corrected
    }

    /// The totals row, from memory when no connection has changed it since.
    ///
    /// Exact across instances and processes: this instance drops its cache after its
    /// own writes, and `PRAGMA data_version` changes whenever another connection
    /// commits.
    func totals() throws(StashError) -> Totals {
        do {
            return try perform("reading the totals") { connection throws(SQLiteError) in
                let version = try connection.dataVersion()
                if let cachedTotals, version == cachedTotalsVersion {
                    return cachedTotals
                }
                let totals = try readTotals(connection)
                cachedTotals = totals
                cachedTotalsVersion = version
                return totals
            }
        } catch where error.code == .corrupted {
            return Totals(count: 0, size: 0, fileCount: 0)
        }
    }

    /// Reads `manifest_totals` (within the caller's transaction, if any).
    func readTotals(_ connection: SQLiteConnection) throws(SQLiteError) -> Totals {
        try connection.withStatement(Manifest.SQL.selectTotals) { statement throws(SQLiteError) in
            guard try statement.step() == .row else { return Totals(count: 0, size: 0, fileCount: 0) }
            return Totals(
                count: Int(statement.int64(at: 0)),
                size: Int(statement.int64(at: 1)),
                fileCount: Int(statement.int64(at: 2))
            )
        }
    }
}

/// Calls `body` with the bytes of `data` (no copy), or with `nil` when `data` is `nil`.
func withBytes<Result>(
    of data: Data?,
    _ body: (UnsafeRawBufferPointer?) throws(SQLiteError) -> Result
) throws(SQLiteError) -> Result {
    guard let data else { return try body(nil) }
    // Data.withUnsafeBytes rethrows untyped errors; carry the typed one through a Result.
    let result = data.withUnsafeBytes { bytes in
        Swift.Result { () throws(SQLiteError) -> Result in try body(bytes) }
    }
    return try result.get()
}
