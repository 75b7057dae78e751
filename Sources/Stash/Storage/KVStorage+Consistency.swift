import CSQLite
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension KVStorage {
    /// Checks the manifest and `data/` against each other and repairs what
    /// disagrees; see ``RepairReport`` for the categories.
    ///
    /// Steps: flush access times; `PRAGMA quick_check` (a failure sets the manifest
    /// aside and restarts the cache empty); list `data/`; then, in one write
    /// transaction, delete unreferenced files older than
    /// ``KVStorageOptions/orphanGracePeriod`` (by modification time on the wall
    /// clock), remove rows whose file is missing or damaged, remove inline rows of
    /// the wrong length, and recompute the totals if they drifted. Damaged rows'
    /// files are deleted after the commit.
    ///
    /// Safe with other instances writing meanwhile: a file written into `data/` but
    /// not yet recorded is protected by the grace period and, should it be deleted
    /// anyway, by the writer's check inside its own transaction (it writes the file
    /// again).
    ///
    /// Also safe when another instance's ``removeAll(progress:)`` moves `data/` to
    /// the trash while `data/` is being listed: the transaction first checks that
    /// `data/` is still the directory that was listed (no one can move it while the
    /// write lock is held), and lists it again if not. Without that, rows written
    /// into the new `data/` would look like rows whose file is missing.
    ///
    /// With a zero ``KVStorageOptions/orphanGracePeriod`` and writers at work, the
    /// report may count as orphans files that were about to be recorded (their
    /// writer then writes them again) or about to be deleted (their row is already
    /// gone): the grace period exists to leave those alone.
    ///
    /// Heavier than any other operation (O(n) in entries and files, and it holds the
    /// write lock while comparing them): the owner runs it in the background, or the
    /// CLI on demand. It is never run on open. ``DiskCache`` runs its background
    /// check on a `KVStorage` of its own, so that the cache's lock stays free.
    ///
    /// - Parameter afterListing: Called once `data/` has been listed and before the
    ///   write transaction begins (so with no SQLite lock held), on the calling
    ///   thread. A test hook: it lets a test pause the check at a known point.
    ///   `nil` by default.
    /// - Returns: What was repaired.
    /// - Complexity: O(n + f) for n entries and f files, plus the integrity check,
    ///   which reads the whole manifest.
    /// - Throws: ``StashError``: `.databaseFailed`, `.ioFailed` if `data/` cannot be
    ///   listed, `.closed`.
    func checkConsistency(afterListing: (() -> Void)? = nil) throws(StashError) -> RepairReport {
        var report = RepairReport()
        try flushAccessTimes()

        let integrity: String?
        do {
            integrity = try perform("checking the manifest's integrity") { connection throws(SQLiteError) in
                try connection.scalarText("PRAGMA quick_check(1)")
            }
        } catch where error.code == .corrupted {
            report.manifestReset = true
            return report
        }
        if let integrity, integrity != "ok" {
            recoverFromCorruption(
                SQLiteError(resultCode: SQLITE_CORRUPT, message: integrity, sql: "PRAGMA quick_check(1)"),
                while: "checking the manifest's integrity"
            )
            report.manifestReset = true
            return report
        }

        if let status = try? FileSystem.entryStatus(dataPath), status.type != .directory {
            report.unexpectedEntriesRemoved += 1
        }
        var damagedFiles: [String] = []
        var hook = afterListing
        var attempt = 1
        while true {
            let outcome: Comparison
            do {
                outcome = try compareFilesAndRows(&report, damagedFiles: &damagedFiles, afterListing: hook)
            } catch where error.code == .corrupted {
                return RepairReport(manifestReset: true)
            }
            hook = nil
            if outcome == .done { break }
            // data/ was replaced (removeAll) between the listing and the transaction.
            guard attempt < 3 else {
                throw StashError(.ioFailed, "\(dataPath) kept being replaced while it was being checked")
            }
            attempt += 1
        }
        for name in damagedFiles {
            removeDataFile(name)
        }
        if !report.isClean {
            logger.notice("repaired the disk cache", metadata: ["report": "\(report)"])
        }
        return report
    }

    /// What one pass of ``compareFilesAndRows(_:damagedFiles:afterListing:)`` did.
    private enum Comparison {
        /// The files and rows were compared and repaired.
        case done
        /// `data/` was no longer the directory listed: nothing was changed.
        case dataDirectoryReplaced
    }

    /// Lists `data/`, then in one write transaction compares it with the rows and
    /// repairs what disagrees, adding to `report` and to `damagedFiles` (files to
    /// delete after the commit); see ``checkConsistency(afterListing:)``.
    ///
    /// - Returns: ``Comparison/dataDirectoryReplaced``, with nothing changed or
    ///   counted, if `data/` at ``dataPath`` is no longer the directory listed.
    private func compareFilesAndRows(
        _ report: inout RepairReport, damagedFiles: inout [String], afterListing: (() -> Void)?
    ) throws(StashError) -> Comparison {
        // List data/ before the transaction: it can be long, and rows committed
        // meanwhile are re-read inside the transaction.
        if options.createsMissing { repairDataDirectory() }
        let directory: Int32
        do {
            directory = try FileSystem.openDirectory(dataPath)
        } catch {
            throw StashError(.ioFailed, "cannot open \(dataPath)", cause: error)
        }
        defer { FileSystem.closeDescriptor(directory) }
        let listedIdentity: FileSystem.Identity
        var listing: [String: FileSystem.Status] = [:]
        var rawNames: [String: [CChar]] = [:]
        do {
            listedIdentity = try FileSystem.status(ofDescriptor: directory).identity
            for entry in try FileSystem.entries(ofDirectory: directory) {
                let status = entry.rawName.withUnsafeBufferPointer { raw in
                    raw.baseAddress.flatMap { try? FileSystem.entryStatus($0, in: directory) }
                }
                guard let status else { continue }  // vanished since the listing
                listing[entry.name] = status
                rawNames[entry.name] = entry.rawName
            }
        } catch {
            throw StashError(.ioFailed, "cannot list \(dataPath)", cause: error)
        }
        afterListing?()

        let now = FileSystem.wallClockNow()
        let grace = options.orphanGracePeriod.nanosecondsClamped
        return try perform("repairing the manifest") { connection throws(SQLiteError) -> Comparison in
            try connection.transaction { () throws(SQLiteError) -> Comparison in
                // removeAll moves data/ to the trash inside its write transaction, so
                // while this one holds the write lock data/ stays what it is now. If
                // it is not the directory listed, the listing and `directory` are of
                // the old one, and every row written since would look as if its file
                // were missing: list again.
                guard dataPathIsDirectory(listedIdentity) else { return .dataDirectoryReplaced }

                var totals = Manifest.TotalsChange()
                var referenced: [String: (rowid: Int64, size: Int)] = [:]
                try connection.withStatement(Manifest.SQL.selectFiles) { statement throws(SQLiteError) in
                    while try statement.step() == .row {
                        if let name = statement.text(at: 1) {
                            referenced[name] = (statement.int64(at: 0), Int(statement.int64(at: 2)))
                        }
                    }
                }

                // Files no row refers to.
                for (name, status) in listing where referenced[name] == nil {
                    guard let raw = rawNames[name] else { continue }
                    switch status.type {
                    case .directory:
                        if (try? trash.moveIn("\(dataPath)/\(name)", label: "data-unexpected")) != nil {
                            report.unexpectedEntriesRemoved += 1
                        }
                    case .symbolicLink, .other:
                        if Self.unlink(raw, in: directory) { report.unexpectedEntriesRemoved += 1 }
                    case .regular:
                        guard now.subtractingClamped(status.modificationTime) >= grace else { continue }
                        if Self.unlink(raw, in: directory) { report.orphanFilesRemoved += 1 }
                    }
                }

                // Rows whose file is missing or damaged.
                for (name, row) in referenced {
                    guard Self.isDataFileName(name) else {
                        // A name that points outside data/: the row is damaged; the file it
                        // names is not the cache's, and is neither inspected nor deleted.
                        try deleteRow(connection, rowid: row.rowid, totals: &totals)
                        report.damagedEntriesRemoved += 1
                        continue
                    }
                    if let listed = listing[name], listed.type == .regular, listed.size == Int64(row.size) { continue }
                    // The listing is not the truth for a row committed after it: its
                    // file was missing then, or still being written (shorter than the
                    // row says). The row's commit came after the file was complete, so
                    // the file as it is now, under the write lock, is what to judge.
                    let status = try? FileSystem.entryStatus(name, in: directory)
                    if let status, status.type == .regular, status.size == Int64(row.size) { continue }
                    try deleteRow(connection, rowid: row.rowid, totals: &totals)
                    if status == nil {
                        report.missingFileEntriesRemoved += 1
                    } else {
                        report.damagedEntriesRemoved += 1
                        damagedFiles.append(name)
                    }
                }

                // Inline rows whose bytes do not match their size.
                let damagedInline = try connection.withStatement(Manifest.SQL.selectDamagedInline) { statement throws(SQLiteError) in
                    var rowids: [Int64] = []
                    while try statement.step() == .row { rowids.append(statement.int64(at: 0)) }
                    return rowids
                }
                for rowid in damagedInline {
                    try deleteRow(connection, rowid: rowid, totals: &totals)
                    report.damagedEntriesRemoved += 1
                }

                try applyTotals(connection, totals)
                report.totalsCorrected = try recountTotals(connection)
                return .done
            }
        }
    }

    /// Removes the non-directory entry `rawName` from `directory`; `true` if it was removed.
    private static func unlink(_ rawName: [CChar], in directory: Int32) -> Bool {
        rawName.withUnsafeBufferPointer { raw in
            guard let name = raw.baseAddress else { return false }
            return (try? FileSystem.removeEntry(name, in: directory)) == true
        }
    }
}

extension KVStorage {
    /// Opens the existing cache in `directory` on a storage of its own, runs
    /// ``checkConsistency(afterListing:)``, optionally empties the trash, and
    /// closes it.
    ///
    /// The one way the disk engine opens a second storage on a cache's directory:
    /// a disk cache's background check and `stash verify` both come through here.
    /// It creates nothing (``KVStorageOptions/createsMissing`` is forced off): a
    /// directory, `data/` or manifest that is gone makes it throw
    /// ``StashError/Code/directoryUnusable`` or ``StashError/Code/databaseFailed``
    /// instead of bringing them back, so a check racing the deletion of the
    /// directory cannot make that deletion fail. (A manifest it finds damaged is
    /// still set aside and replaced: that is the repair.)
    ///
    /// - Parameters:
    ///   - directory: The cache's directory.
    ///   - kind: The storage kind (it does not change what is checked).
    ///   - clock: The storage's clock.
    ///   - logger: Where repairs are reported.
    ///   - options: Tunables; `createsMissing` is ignored.
    ///   - emptyingTrash: Whether to empty `trash/` after the check. Defaults to `false`.
    ///   - afterListing: The test hook of ``checkConsistency(afterListing:)``.
    /// - Returns: What was repaired.
    /// - Throws: ``StashError``, as opening a storage and ``checkConsistency(afterListing:)``.
    /// - Complexity: O(n + f) for n entries and f files. Blocks on disk I/O.
    static func checkConsistency(
        ofDirectory directory: String, kind: DiskStorageKind = .default, clock: any CacheClock, logger: Logger,
        options: KVStorageOptions = KVStorageOptions(), emptyingTrash: Bool = false, afterListing: (() -> Void)? = nil
    ) throws(StashError) -> RepairReport {
        var options = options
        options.createsMissing = false
        let checker = try KVStorage(directory: directory, kind: kind, clock: clock, logger: logger, options: options)
        defer { checker.close() }
        let report = try checker.checkConsistency(afterListing: afterListing)
        if emptyingTrash { checker.emptyTrash() }
        return report
    }
}
