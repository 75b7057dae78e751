#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Removing many entries: removeAll, expiry, and the LRU trims by count, size, age and
// free disk space.
//
// Trims remove the least recently used entries first (by `last_access_time`, ties by
// `modification_time`, then insertion order), after flushing pending access times so that recent reads count.
// They work in batches of `trimBatchSize` rows, each batch one write transaction, so
// other connections are never locked out for long. Files are deleted only after the
// batch's rows have committed.

extension KVStorage {
    /// One row chosen for removal.
    struct Victim {
        var rowid: Int64
        var filename: String?
        var size: Int
    }

    /// Removes every entry.
    ///
    /// In one write transaction: the rows are deleted in batches (reporting progress
    /// after each), then `data/` is renamed into the trash and a new empty `data/`
    /// is created, so the cost does not grow with the number of files. The trash is
    /// emptied later by ``emptyTrash()``, which the owner runs in the background.
    /// Pending access times are dropped.
    ///
    /// - Parameter progress: Called with (entries removed so far, total entries) after
    ///   each batch, and once at the end with (total, total). Runs inside the write
    ///   transaction: keep it short. `nil` by default.
    /// - Complexity: O(n) row deletions; O(1) file-system work.
    /// - Throws: ``StashError``: `.databaseFailed` (nothing was removed),
    ///   `.corrupted`, `.closed`.
    func removeAll(progress: ((_ removed: Int, _ total: Int) -> Void)? = nil) throws(StashError) {
        _ = try requireWritableConnection()
        accessLog.removeAll()
        let batchSize = Int64(max(options.trimBatchSize, 1024))
        // Where data/ went in the trash, to put it back if the transaction fails:
        // the rollback brings the rows back, so their files must come back too.
        var movedData: String?
        try perform("removing all entries") { connection throws(SQLiteError) in
            try connection.transaction(undo: {
                if let movedData { restoreDataDirectory(from: movedData) }
            }) { () throws(SQLiteError) in
                let total = try readTotals(connection).count
                progress?(0, total)
                var removed = 0
                while true {
                    try connection.withStatement(Manifest.SQL.deleteSomeRows) { statement throws(SQLiteError) in
                        try statement.bind(batchSize, at: 1)
                        try statement.step()
                    }
                    let changes = connection.changes
                    if changes == 0 { break }
                    removed += changes
                    progress?(min(removed, total), total)
                }
                try setTotalsToZero(connection)
                // Still holding the write lock: no other instance can commit a row for
                // a file in the old data/ after this point (see setValue's liveness check).
                do {
                    movedData = try trash.moveIn(dataPath, label: "data")
                } catch {
                    logger.warning(
                        "cannot move data/ to the trash; its files will be removed by the next consistency check",
                        metadata: ["error": "\(error)"]
                    )
                }
                forgetDataDirectory()
                repairDataDirectory()
                progress?(total, total)
            }
        }
        reclaimFreePages()
    }

    /// Puts back the `data/` that a failed ``removeAll(progress:)`` moved to the
    /// trash at `moved`, whose rows the rollback restored.
    ///
    /// Usually `data/` is still the empty directory removeAll created, and the old
    /// one is renamed back in its place. If another instance has written into the
    /// new one meanwhile, the old files are moved into it one by one. A failure is
    /// logged: the entries whose files could not be restored then read as misses.
    func restoreDataDirectory(from moved: String) {
        forgetDataDirectory()
        if (try? FileSystem.removeDirectory(dataPath)) != nil {
            do throws(SystemCallError) {
                try FileSystem.rename(moved, to: dataPath)
                logger.warning("removing all entries failed; data/ was put back")
                return
            } catch {
                // Another instance created data/ in the meantime: move the files.
            }
        }
        repairDataDirectory()
        do throws(SystemCallError) {
            let source = try FileSystem.openDirectory(moved)
            defer { FileSystem.closeDescriptor(source) }
            let target = try FileSystem.openDirectory(dataPath)
            defer { FileSystem.closeDescriptor(target) }
            var failed = 0
            for entry in try FileSystem.entries(ofDirectory: source) {
                let renamed = entry.rawName.withUnsafeBufferPointer { raw in
                    raw.baseAddress.map { (try? FileSystem.move($0, from: source, to: target)) != nil } ?? false
                }
                if !renamed { failed += 1 }
            }
            if failed > 0 {
                logger.error("removing all entries failed and some files could not be put back in data/",
                             metadata: ["failed": "\(failed)", "from": "\(moved)"])
            } else {
                logger.warning("removing all entries failed; the files were put back in data/")
            }
        } catch {
            logger.error("removing all entries failed and data/ could not be put back",
                         metadata: ["from": "\(moved)", "error": "\(error)"])
        }
    }

    /// Deletes the trash's contents, never following symbolic links.
    ///
    /// The owner may instead call ``Trash/empty()`` on ``trash`` from another thread
    /// without holding its lock.
    ///
    /// - Returns: The number of entries deleted.
    /// - Complexity: O(n) in the trash's entries.
    @discardableResult
    func emptyTrash() -> Int {
        trash.empty()
    }

    /// Removes every entry whose expiration time is at or before `now`.
    ///
    /// - Parameter now: The time to compare with, in nanoseconds on ``clock``;
    ///   `nil` (the default) for the clock's current time.
    /// - Returns: The number of entries removed.
    /// - Complexity: O(k log n) for k expired entries (indexed).
    /// - Throws: ``StashError``: `.databaseFailed`, `.corrupted`, `.closed`.
    @discardableResult
    func removeExpired(now: Int64? = nil) throws(StashError) -> Int {
        let now = now ?? clock.nanosecondsNow
        let batch = Int64(options.trimBatchSize)
        return try removeInBatches("removing expired entries") { connection throws(SQLiteError) in
            try selectVictims(connection, Manifest.SQL.selectExpired) { statement throws(SQLiteError) in
                try statement.bind(now, at: 1)
                try statement.bind(batch, at: 2)
            }
        }
    }

    /// Removes least recently used entries until at most `limit` remain.
    ///
    /// - Parameter limit: The number of entries to keep; 0 removes everything.
    /// - Returns: The number of entries removed.
    /// - Complexity: O(k log n) for k removed entries.
    /// - Throws: ``StashError``: `.invalidArgument` for a negative limit;
    ///   `.databaseFailed`, `.corrupted`, `.closed`.
    @discardableResult
    func trim(toCount limit: Int) throws(StashError) -> Int {
        guard limit >= 0 else {
            throw StashError(.invalidArgument, "a count limit must not be negative (got \(limit))")
        }
        try flushAccessTimes()
        let batch = options.trimBatchSize
        return try removeInBatches("trimming to \(limit) entries") { connection throws(SQLiteError) in
            let excess = max(try readTotals(connection).count, 0) - limit
            guard excess > 0 else { return [] }
            return try selectVictims(connection, Manifest.SQL.selectLeastRecentlyUsed) { statement throws(SQLiteError) in
                try statement.bind(Int64(min(excess, batch)), at: 1)
            }
        }
    }

    /// Removes least recently used entries until their sizes add up to at most
    /// `limit` bytes.
    ///
    /// - Parameter limit: The number of bytes to keep; 0 removes everything.
    /// - Returns: The number of entries removed.
    /// - Complexity: O(k log n) for k removed entries.
    /// - Throws: ``StashError``: `.invalidArgument` for a negative limit;
    ///   `.databaseFailed`, `.corrupted`, `.closed`.
    @discardableResult
    func trim(toSize limit: Int) throws(StashError) -> Int {
        guard limit >= 0 else {
            throw StashError(.invalidArgument, "a size limit must not be negative (got \(limit))")
        }
        try flushAccessTimes()
        let batch = Int64(options.trimBatchSize)
        return try removeInBatches("trimming to \(limit) bytes") { connection throws(SQLiteError) in
            // A damaged row may record a negative size (the consistency check removes it):
            // neither it nor totals it made negative may overflow the arithmetic here.
            var excess = max(try readTotals(connection).size, 0) - limit
            guard excess > 0 else { return [] }
            let candidates = try selectVictims(connection, Manifest.SQL.selectLeastRecentlyUsed) { statement throws(SQLiteError) in
                try statement.bind(batch, at: 1)
            }
            var victims: [Victim] = []
            for candidate in candidates where excess > 0 {
                victims.append(candidate)
                excess -= max(candidate.size, 0)
            }
            return victims
        }
    }

    /// Removes entries written `age` or longer ago: ages count from the last write,
    /// as in the memory tier, and reads don't renew them.
    ///
    /// Entries last accessed before the cutoff all go (an entry's last access is
    /// never before its last write); entries accessed since are tested from the
    /// access index alone, without reading their rows.
    ///
    /// - Parameter age: The age from which entries go; must not be negative.
    ///   `.zero` removes every entry.
    /// - Returns: The number of entries removed.
    /// - Complexity: O(k log n) for k removed entries, plus one pass over the index
    ///   entries of those accessed within the last `age`.
    /// - Throws: ``StashError``: `.invalidArgument` for a negative age;
    ///   `.databaseFailed`, `.corrupted`, `.closed`.
    @discardableResult
    func trim(toAge age: Duration) throws(StashError) -> Int {
        guard age >= .zero else {
            throw StashError(.invalidArgument, "an age limit must not be negative (got \(age))")
        }
        let cutoff = clock.nanosecondsNow.subtractingClamped(age.nanosecondsClamped)
        let batch = Int64(options.trimBatchSize)
        // Where the previous batch stopped in the access index: the entries before it
        // were removed or are younger than the cutoff.
        var resumeAt = Int64.min
        return try removeInBatches("trimming to an age of \(age)") { connection throws(SQLiteError) in
            try connection.withStatement(Manifest.SQL.selectWrittenBefore) { statement throws(SQLiteError) in
                try statement.bind(cutoff, at: 1)
                try statement.bind(resumeAt, at: 2)
                try statement.bind(batch, at: 3)
                var victims: [Victim] = []
                while try statement.step() == .row {
                    victims.append(Self.victim(statement))
                    resumeAt = statement.int64(at: 3)
                }
                return victims
            }
        }
    }

    /// Removes least recently used entries until the file system holding the cache
    /// has at least `limit` bytes available (`statvfs`), or the cache is empty.
    ///
    /// Space held by inline values is returned to the file system by an incremental
    /// vacuum after the trim; space held by files already in the trash is freed only
    /// when the trash is emptied.
    ///
    /// - Parameter limit: The free space to ensure, in bytes.
    /// - Returns: The number of entries removed.
    /// - Throws: ``StashError``: `.invalidArgument` for a negative limit; `.ioFailed`
    ///   if `statvfs` fails; `.databaseFailed`, `.corrupted`, `.closed`.
    @discardableResult
    func trimForFreeDiskSpace(limit: Int) throws(StashError) -> Int {
        let available: Int
        do {
            available = try FileSystem.availableSpace(at: directory)
        } catch {
            throw StashError(.ioFailed, "cannot read the free space of \(directory)", cause: error)
        }
        return try trim(forFreeDiskSpace: limit, available: available)
    }

    /// ``trimForFreeDiskSpace(limit:)`` with the available space given (testable).
    func trim(forFreeDiskSpace limit: Int, available: Int) throws(StashError) -> Int {
        guard limit >= 0 else {
            throw StashError(.invalidArgument, "a free-space limit must not be negative (got \(limit))")
        }
        guard available < limit else { return 0 }
        let needed = limit - available
        let target = max(0, try totalSize() - needed)
        return try trim(toSize: target)
    }

    // MARK: - Helpers

    /// Repeats until `select` returns no rows: in one write transaction, delete the
    /// rows `select` picks; after the commit, delete their files.
    ///
    /// - Returns: The number of rows removed.
    func removeInBatches(
        _ action: @autoclosure () -> String,
        select: (SQLiteConnection) throws(SQLiteError) -> [Victim]
    ) throws(StashError) -> Int {
        _ = try requireWritableConnection()
        var removed = 0
        while true {
            let victims = try perform(action()) { connection throws(SQLiteError) in
                try connection.transaction { () throws(SQLiteError) -> [Victim] in
                    let victims = try select(connection)
                    var totals = Manifest.TotalsChange()
                    for victim in victims {
                        try deleteRow(connection, rowid: victim.rowid, totals: &totals)
                    }
                    try applyTotals(connection, totals)
                    return victims
                }
            }
            if victims.isEmpty { break }
            removed += victims.count
            for case let filename? in victims.map(\.filename) {
                removeDataFile(filename)
            }
        }
        if removed > 0 {
            reclaimFreePages()
        }
        return removed
    }

    /// Deletes the row `rowid`, if it is still there, and takes it off `totals`.
    func deleteRow(_ connection: SQLiteConnection, rowid: Int64, totals: inout Manifest.TotalsChange) throws(SQLiteError) {
        try connection.withStatement(Manifest.SQL.deleteRow) { statement throws(SQLiteError) in
            try statement.bind(rowid, at: 1)
            while try statement.step() == .row {
                totals.remove(returnedBy: statement)
            }
        }
    }

    /// Runs `sql` and collects (rowid, filename, size) rows, after `bind` has bound
    /// its parameters.
    func selectVictims(
        _ connection: SQLiteConnection,
        _ sql: StaticString,
        bind: (SQLiteStatement) throws(SQLiteError) -> Void
    ) throws(SQLiteError) -> [Victim] {
        try connection.withStatement(sql) { statement throws(SQLiteError) in
            try bind(statement)
            var victims: [Victim] = []
            while try statement.step() == .row {
                victims.append(Self.victim(statement))
            }
            return victims
        }
    }

    /// The victim in the current row of a statement whose first columns are
    /// (rowid, filename, size).
    static func victim(_ statement: SQLiteStatement) -> Victim {
        Victim(rowid: statement.int64(at: 0), filename: statement.text(at: 1), size: Int(statement.int64(at: 2)))
    }

    /// The number of free pages above which removals give space back to the file
    /// system (`PRAGMA incremental_vacuum`): 256 pages, 1 MiB with 4 KiB pages.
    static let freePagesToReclaim: Int64 = 256

    /// Returns the manifest's free pages to the file system once there are more than
    /// ``freePagesToReclaim``. Failures are logged: the space is reclaimed next time.
    func reclaimFreePages() {
        guard let connection else { return }
        do throws(SQLiteError) {
            let free = try connection.scalarInt64("PRAGMA freelist_count") ?? 0
            if free > Self.freePagesToReclaim {
                try connection.run("PRAGMA incremental_vacuum")
            }
        } catch {
            logger.notice("could not reclaim free space in the manifest", metadata: ["error": "\(error)"])
        }
    }
}
