import CSQLite
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The schema and SQL of a disk cache's `manifest.sqlite`, and how it is opened.
///
/// The schema, its indexes, the totals row and the migrations are described
/// once, in the On-Disk Format article (Stash.docc/OnDiskFormat.md); this type
/// is their code: ``createSchema``, ``migrations``, ``SQL`` and
/// ``open(path:busyTimeout:synchronous:create:)``. `manifest_totals` is kept
/// exact by every writer through ``adjustTotals(_:by:)``.
enum Manifest {
    /// The manifest's file name inside the cache directory.
    static let fileName = "manifest.sqlite"

    /// The schema version this code reads and writes.
    static let schemaVersion: Int64 = 3

    /// Creates the current schema (version 3) in an empty database.
    static let createSchema = """
        CREATE TABLE IF NOT EXISTS manifest (
            key TEXT NOT NULL PRIMARY KEY,
            filename TEXT,
            size INTEGER NOT NULL,
            inline_data BLOB,
            modification_time INTEGER NOT NULL,
            last_access_time INTEGER NOT NULL,
            expiration_time INTEGER,
            extended_data BLOB
        );
        CREATE INDEX IF NOT EXISTS manifest_last_access_time ON manifest(last_access_time, modification_time);
        CREATE INDEX IF NOT EXISTS manifest_expiration_time ON manifest(expiration_time)
            WHERE expiration_time IS NOT NULL;
        CREATE TABLE IF NOT EXISTS manifest_totals (
            id INTEGER PRIMARY KEY CHECK (id = 0),
            count INTEGER NOT NULL,
            size INTEGER NOT NULL,
            file_count INTEGER NOT NULL
        );
        INSERT OR IGNORE INTO manifest_totals (id, count, size, file_count) VALUES (0, 0, 0, 0);
        PRAGMA user_version = 3;
        """

    /// The migration from each older version to the next, by the version it starts from.
    static let migrations: [Int64: String] = [
        // Version 1 to 2: the two time indexes become one.
        1: """
            DROP INDEX IF EXISTS manifest_modification_time;
            DROP INDEX IF EXISTS manifest_last_access_time;
            CREATE INDEX manifest_last_access_time ON manifest(last_access_time, modification_time);
            PRAGMA user_version = 2;
            """,
        // Version 2 to 3: the totals are kept by the storage's statements, not triggers.
        2: """
            DROP TRIGGER IF EXISTS manifest_after_insert;
            DROP TRIGGER IF EXISTS manifest_after_delete;
            DROP TRIGGER IF EXISTS manifest_after_update;
            PRAGMA user_version = 3;
            """,
    ]

    /// The SQL text of every statement the storage runs. Each is prepared once per
    /// connection and cached by this text.
    enum SQL {
        static let selectItem: StaticString = """
            SELECT filename, size, inline_data, modification_time, expiration_time, last_access_time
            FROM manifest WHERE key = ?1
            """
        static let selectExpiration: StaticString = "SELECT expiration_time FROM manifest WHERE key = ?1"
        static let selectExtendedData: StaticString = "SELECT expiration_time, extended_data FROM manifest WHERE key = ?1"
        static let selectPrevious: StaticString = "SELECT filename, size FROM manifest WHERE key = ?1"
        static let upsert: StaticString = """
            INSERT INTO manifest (key, filename, size, inline_data, modification_time, last_access_time,
                                  expiration_time, extended_data)
            VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6, ?7)
            ON CONFLICT (key) DO UPDATE SET
                filename = excluded.filename, size = excluded.size, inline_data = excluded.inline_data,
                modification_time = excluded.modification_time, last_access_time = excluded.last_access_time,
                expiration_time = excluded.expiration_time, extended_data = excluded.extended_data
            """
        // Every DELETE returns (filename, size): the change to the totals.
        static let deleteKey: StaticString = "DELETE FROM manifest WHERE key = ?1 RETURNING filename, size"
        static let deleteExpiredKey: StaticString = """
            DELETE FROM manifest WHERE key = ?1 AND expiration_time <= ?2 RETURNING filename, size
            """
        static let deleteKeyWithFile: StaticString = """
            DELETE FROM manifest WHERE key = ?1 AND filename = ?2 RETURNING filename, size
            """
        static let deleteInlineKey: StaticString = """
            DELETE FROM manifest WHERE key = ?1 AND filename IS NULL AND size = ?2 RETURNING filename, size
            """
        static let deleteRow: StaticString = "DELETE FROM manifest WHERE rowid = ?1 RETURNING filename, size"
        static let deleteSomeRows: StaticString = "DELETE FROM manifest WHERE rowid IN (SELECT rowid FROM manifest LIMIT ?1)"
        static let updateAccessTime: StaticString = """
            UPDATE manifest SET last_access_time = ?2 WHERE key = ?1 AND last_access_time < ?2
            """
        static let selectTotals: StaticString = "SELECT count, size, file_count FROM manifest_totals WHERE id = 0"
        // total() sums in floating point, so damaged sizes never overflow (sum() would throw);
        // negative sizes count as 0, as in TotalsChange. Exact up to 2^53 bytes.
        static let recountTotals: StaticString = """
            SELECT count(*), CAST(min(total(max(size, 0)), 9.2e18) AS INTEGER), count(filename) FROM manifest
            """
        static let adjustTotals: StaticString = """
            UPDATE manifest_totals
            SET count = count + ?1, size = size + ?2, file_count = file_count + ?3 WHERE id = 0
            """
        static let replaceTotals: StaticString = """
            INSERT OR REPLACE INTO manifest_totals (id, count, size, file_count) VALUES (0, ?1, ?2, ?3)
            """
        static let selectLeastRecentlyUsed: StaticString = """
            SELECT rowid, filename, size FROM manifest
            ORDER BY last_access_time, modification_time, rowid LIMIT ?1
            """
        /// Entries written at or before ?1, scanning the access index from ?2 on:
        /// the written-before test reads only the index, the table only for a match.
        static let selectWrittenBefore: StaticString = """
            SELECT rowid, filename, size, last_access_time FROM manifest
            WHERE last_access_time >= ?2 AND modification_time <= ?1
            ORDER BY last_access_time, modification_time LIMIT ?3
            """
        static let selectExpired: StaticString = """
            SELECT rowid, filename, size FROM manifest WHERE expiration_time <= ?1 LIMIT ?2
            """
        static let selectAccessRange: StaticString = """
            SELECT (SELECT min(last_access_time) FROM manifest), (SELECT max(last_access_time) FROM manifest)
            """
        static let selectFiles: StaticString = "SELECT rowid, filename, size FROM manifest WHERE filename IS NOT NULL"
        static let selectDamagedInline: StaticString = """
            SELECT rowid FROM manifest
            WHERE filename IS NULL AND coalesce(length(inline_data), 0) != size
            """
        static let selectRowFile: StaticString = "SELECT filename, size FROM manifest WHERE rowid = ?1"
        static let validateManifest: StaticString = """
            SELECT key, filename, size, inline_data, modification_time, last_access_time, expiration_time,
                   extended_data FROM manifest LIMIT 0
            """
    }

    /// How many WAL pages a commit leaves before it checkpoints the WAL into the
    /// database: 4,096 (16 MiB at SQLite's default 4 KiB pages), SQLite's default
    /// being 1,000.
    ///
    /// A checkpoint copies the WAL's pages into the database and, with
    /// `synchronous = NORMAL`, `fsync`s both files; the commit that crosses the
    /// threshold pays for it. A small write appends about four pages (the row's
    /// table page, its key and access index pages, the totals), four times what a
    /// plain key-value upsert appends; at SQLite's default a cache would then
    /// checkpoint, and `fsync`, every 250 small writes. At 4,096 pages it does so
    /// about as often per write as a one-table store does at the default
    /// (docs/benchmarks.md has the figures). The cost is a larger WAL on disk
    /// between checkpoints and, after a crash, more of it to read on the next open.
    static let autoCheckpointPages = 4096

    /// The size to which SQLite truncates the WAL after a checkpoint: 20 MiB,
    /// above the ``autoCheckpointPages`` the WAL reaches between checkpoints, so
    /// that the file is reused rather than shrunk and regrown each time, while a
    /// large transaction (a `removeAll`) does not leave a larger WAL behind.
    static let journalSizeLimit = 20 << 20

    /// What ``open(path:busyTimeout:synchronous:)`` found.
    enum OpenOutcome {
        /// The manifest is open, configured and at ``schemaVersion``.
        case ready(SQLiteConnection)
        /// The file is a healthy SQLite database this code cannot use (a newer
        /// schema version, or not Stash's schema). The connection has been closed.
        case unusable(reason: String)
    }

    /// Runs `body`, and again after a pause (1 ms, doubling up to 32 ms) while it throws a busy
    /// error, for up to `timeout`; then throws the last error. Blocks the calling thread.
    private static func whileBusy(for timeout: Duration, _ body: () throws(SQLiteError) -> Void) throws(SQLiteError) {
        let deadline = ContinuousClock.now + timeout
        var pause = Duration.milliseconds(1)
        while true {
            do {
                return try body()
            } catch where error.isBusy && ContinuousClock.now + pause < deadline {
                usleep(UInt32(pause.components.attoseconds / 1_000_000_000_000))
                pause = min(pause * 2, .milliseconds(32))
            }
        }
    }

    /// Opens the manifest at `path`, creating or migrating its schema.
    ///
    /// Settings: `auto_vacuum = INCREMENTAL` (effective only on a new file),
    /// `journal_mode = WAL` (readers never block the writer),
    /// `synchronous = NORMAL` (a commit is durable at the next checkpoint; a power
    /// loss can lose the last transactions but never corrupts the database) or
    /// `FULL` when `synchronous` is set, `temp_store = MEMORY`, a
    /// `wal_autocheckpoint` of ``autoCheckpointPages`` and a `journal_size_limit`
    /// of ``journalSizeLimit``.
    ///
    /// Only cheap checks run here (the file header, the schema version, the
    /// tables), so opening a cache of any size costs the same. Deep damage
    /// surfaces later as `SQLITE_CORRUPT`, or in a full check run by
    /// ``KVStorage/checkConsistency()``.
    ///
    /// - Throws: ``SQLiteError``; ``SQLiteError/isCorruption`` tells a damaged
    ///   or foreign file (garbage header: `SQLITE_NOTADB`) from a failure to report
    ///   (busy beyond the timeout, I/O error, full disk).
    static func open(path: String, busyTimeout: Duration, synchronous: Bool, create: Bool = true) throws(SQLiteError) -> OpenOutcome {
        let connection = try SQLiteConnection(path: path, busyTimeout: busyTimeout, create: create)
        // Two processes opening a new manifest at once both write its header and switch it to
        // WAL: each holds a lock the other needs, and SQLite answers one of them busy at once,
        // without its busy handler (which would deadlock). Retried here, as the handler would.
        try whileBusy(for: busyTimeout) { () throws(SQLiteError) in
            try connection.execute("PRAGMA auto_vacuum = INCREMENTAL")
            _ = try connection.scalarText("PRAGMA journal_mode = WAL")
        }
        try connection.execute(synchronous ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL")
        // On Apple platforms a sync reaches the disk only with F_FULLFSYNC (a no-op elsewhere).
        if synchronous { try connection.execute("PRAGMA fullfsync = ON") }
        try connection.execute("PRAGMA temp_store = MEMORY")
        try connection.execute("PRAGMA journal_size_limit = \(journalSizeLimit)")
        try connection.execute("PRAGMA wal_autocheckpoint = \(autoCheckpointPages)")

        var version = try connection.scalarInt64("PRAGMA user_version") ?? 0
        if version < schemaVersion {
            // Another process may be creating the schema too: decide inside the write lock.
            version = try connection.transaction { () throws(SQLiteError) -> Int64 in
                let current = try connection.scalarInt64("PRAGMA user_version") ?? 0
                if current == 0 {
                    try connection.execute(createSchema)
                    return schemaVersion
                }
                var version = current
                while let migration = migrations[version] {
                    try connection.execute(migration)
                    version += 1
                }
                return version
            }
        }
        if version != schemaVersion {
            connection.close()
            return .unusable(reason: "schema version \(version) is not the supported version \(schemaVersion)")
        }

        // The tables this code relies on must be there with their columns.
        do {
            _ = try connection.statement(SQL.validateManifest)
            let hasTotals = try connection.withStatement(SQL.selectTotals) { statement throws(SQLiteError) in
                try statement.step() == .row
            }
            if !hasTotals {
                try recountTotals(connection)
            }
        } catch where !error.isCorruption && !error.isBusy && error.resultCode == SQLITE_ERROR {
            connection.close()
            return .unusable(reason: "the database does not have Stash's schema: \(error.message)")
        }
        return .ready(connection)
    }

    /// A change to `manifest_totals`: the sum of a transaction's row changes,
    /// applied once before it commits with ``adjustTotals(_:by:)``.
    struct TotalsChange: Equatable {
        var count: Int64 = 0
        var size: Int64 = 0
        var fileCount: Int64 = 0

        // A damaged row may record any size: Int64.min trapped the consistency check that
        // removed it (found by FuzzDiskEntry). A negative size counts as 0, as in the recount
        // (SQL.recountTotals), and the arithmetic wraps, so that adding and removing a row stay
        // exact inverses and nothing traps; totals that end up wrong are recounted by the check.

        /// Counts a row added with a value of `size` bytes, in a file or inline.
        mutating func add(size: Int, hasFile: Bool) {
            count &+= 1
            self.size &+= Int64(Swift.max(size, 0))
            if hasFile { fileCount &+= 1 }
        }

        /// Counts a row removed.
        mutating func remove(size: Int, hasFile: Bool) {
            count &-= 1
            self.size &-= Int64(Swift.max(size, 0))
            if hasFile { fileCount &-= 1 }
        }

        /// Counts the row that a `DELETE … RETURNING filename, size` statement
        /// has just returned.
        mutating func remove(returnedBy statement: SQLiteStatement) {
            remove(size: Int(statement.int64(at: 1)), hasFile: !statement.isNull(at: 0))
        }
    }

    /// Applies `change` to `manifest_totals` within the caller's transaction.
    static func adjustTotals(_ connection: SQLiteConnection, by change: TotalsChange) throws(SQLiteError) {
        try connection.withStatement(SQL.adjustTotals) { statement throws(SQLiteError) in
            try statement.bind(change.count, at: 1)
            try statement.bind(change.size, at: 2)
            try statement.bind(change.fileCount, at: 3)
            try statement.step()
        }
    }

    /// Sets `manifest_totals` to zero, within the caller's transaction, once it has
    /// deleted every row.
    static func setTotalsToZero(_ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.withStatement(SQL.replaceTotals) { statement throws(SQLiteError) in
            for index: Int32 in 1...3 { try statement.bind(Int64(0), at: index) }
            try statement.step()
        }
    }

    /// The totals a recount found, and whether the stored row differed.
    struct Recount {
        var count: Int64
        var size: Int64
        var fileCount: Int64
        var corrected: Bool
    }

    /// Recomputes `manifest_totals` from the rows, replacing it if it differs.
    /// O(n); used on repair, never on a hot path.
    @discardableResult
    static func recountTotals(_ connection: SQLiteConnection) throws(SQLiteError) -> Recount {
        let actual = try connection.withStatement(SQL.recountTotals) { statement throws(SQLiteError) in
            try statement.step()
            return (statement.int64(at: 0), statement.int64(at: 1), statement.int64(at: 2))
        }
        let stored = try connection.withStatement(SQL.selectTotals) { statement throws(SQLiteError) in
            try statement.step() == .row ? (statement.int64(at: 0), statement.int64(at: 1), statement.int64(at: 2)) : nil
        }
        let corrected = stored.map { $0 != actual } ?? true
        if corrected {
            try connection.withStatement(SQL.replaceTotals) { statement throws(SQLiteError) in
                try statement.bind(actual.0, at: 1)
                try statement.bind(actual.1, at: 2)
                try statement.bind(actual.2, at: 3)
                try statement.step()
            }
        }
        return Recount(count: actual.0, size: actual.1, fileCount: actual.2, corrected: corrected)
    }
}
