// KVStorage: the disk engine under `DiskCache`: one directory holding a SQLite
// manifest and a data/ folder. The layout, the schema and the write protocol are
// described once, in the DocC article Sources/Stash/Stash.docc/OnDiskFormat.md.
//
// The engine is split by feature: this file holds its state and lifecycle;
// KVStorageOptions.swift its tunables; KVStorage+Connection (errors and the
// connection), +Write, +Read, +Remove, +Totals, +Keys (the key rules), +Files
// (data/ and the FileSystem calls), +Trim, +AccessTimes, +Recovery,
// +Consistency and +Usage the rest.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

import CSQLite
import Logging

/// The disk storage engine: a key-value store of byte values, each with optional
/// extended data, an expiration time and access times, kept in one directory.
///
/// The layout on disk, the schema and the write protocol are described in the
/// On-Disk Format article (Stash.docc/OnDiskFormat.md). The `DiskCache` facade builds typed, thread-safe caching on top of it.
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

    /// The open manifest; `nil` after `close()`, or after a recovery that could
    /// not reopen it (the next operation tries again).
    var connection: SQLiteConnection? {
        didSet {
            if connection !== oldValue { readers.retireAll() }
        }
    }
    /// Set by `close()`: every later call throws ``StashError/Code/closed``.
    var isClosed = false
    /// The manifest file this instance opened, to notice when another instance has
    /// set it aside and replaced it.
    var manifestIdentity: FileSystem.Identity?
    /// The kept descriptor of `data/`, opened on first use; see KVStorage+Files.swift.
    var openDataDirectory: DataDirectory?
    /// Names for new value files.
    var fileNames = FileNameGenerator()
    /// Last-access times of reads not yet written to the manifest. Thread-safe:
    /// the owner's reads through ``readers`` record times here without its lock.
    let accessLog: AccessLog
    /// Read-only connections of their own, for reads that run without the owner's
    /// lock. Thread-safe. Every change of ``connection`` (a reopening, a recovery,
    /// `close()`) retires them, so that none reads a manifest this instance left.
    let readers: ManifestReaderPool
    /// The totals last read, valid while ``cachedTotalsVersion`` is the
    /// connection's `data_version` and this instance has not written since.
    var cachedTotals: Totals?
    /// The `PRAGMA data_version` at which ``cachedTotals`` was read.
    var cachedTotalsVersion: Int64 = 0
    /// Expired entries that reads found and removed: evictions, for the owner's
    /// statistics.
    var expiredOnRead = 0

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
    /// - Throws: ``StashError``: `.invalidArgument` for a nonsensical option (a
    ///   negative inline threshold is logged and treated as 0); `.directoryUnusable` if the directory cannot be
    ///   created or is not a directory; `.databaseFailed` if SQLite fails for a
    ///   reason other than damage (e.g. the database stayed locked past the busy timeout).
    init(
        directory: String,
        kind: DiskStorageKind = .default,
        clock: any CacheClock,
        logger: Logger,
        options: KVStorageOptions = KVStorageOptions()
    ) throws(StashError) {
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
        if let threshold = kind.inlineThreshold, threshold < 0 {
            // One policy for every negative limit: clamp to 0 and say so.
            logger.warning("the inline threshold must not be negative (got \(threshold)); using 0")
            self.kind = .mixed(inlineThreshold: 0)
        } else {
            self.kind = kind
        }
        self.clock = clock
        self.options = options
        accessLog = AccessLog(expectedCount: min(options.accessFlushThreshold, 4096))
        readers = ManifestReaderPool(
            manifestPath: manifestPath, dataPath: dataPath, options: options, logger: logger)

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
        if accessLog.count > 0, manifestIsCurrent() {
            do {
                try flushAccessTimes()
            } catch {
                logger.warning("could not save access times on close", metadata: ["error": "\(error)"])
            }
        }
        readers.close()
        connection?.close()
        connection = nil
        forgetDataDirectory()
        isClosed = true
    }
}
