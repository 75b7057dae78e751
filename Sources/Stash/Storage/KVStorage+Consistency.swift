import CSQLite

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What a consistency check of a disk cache found and repaired.
///
/// Returned by the disk cache's verification (the `stash verify` command runs it
/// directly; a disk cache also runs it in the background after opening). Every
/// count is of things already repaired: the cache is consistent afterwards.
///
/// ```swift
/// let report = try cache.verify()
/// if !report.isClean { print(report) }
/// ```
///
/// A value type: `Sendable`, safe to share between threads.
public struct RepairReport: Sendable, Hashable, CustomStringConvertible {
    /// Files in `data/` that no entry referred to (left by a crash before their
    /// entry was recorded, or by a deletion that failed), older than the grace
    /// period (1 hour by default), deleted. Younger ones are left alone: another
    /// process may be about to record them.
    public var orphanFilesRemoved: Int
    /// Entries in `data/` that Stash never creates (symbolic links, directories,
    /// devices), removed without following them.
    public var unexpectedEntriesRemoved: Int
    /// Cache entries whose file was missing, removed.
    public var missingFileEntriesRemoved: Int
    /// Cache entries whose bytes were damaged (a file of the wrong size or type, an
    /// inline value of the wrong length), removed with their files.
    public var damagedEntriesRemoved: Int
    /// Whether the stored entry count or total size disagreed with the entries and
    /// was recomputed.
    public var totalsCorrected: Bool
    /// Whether the manifest failed SQLite's integrity check and was set aside: the
    /// cache was restarted empty, and the other counts are then zero.
    public var manifestReset: Bool

    /// Creates a report. Every count defaults to 0 and every flag to `false`: a
    /// clean report.
    public init(
        orphanFilesRemoved: Int = 0,
        unexpectedEntriesRemoved: Int = 0,
        missingFileEntriesRemoved: Int = 0,
        damagedEntriesRemoved: Int = 0,
        totalsCorrected: Bool = false,
        manifestReset: Bool = false
    ) {
        self.orphanFilesRemoved = orphanFilesRemoved
        self.unexpectedEntriesRemoved = unexpectedEntriesRemoved
        self.missingFileEntriesRemoved = missingFileEntriesRemoved
        self.damagedEntriesRemoved = damagedEntriesRemoved
        self.totalsCorrected = totalsCorrected
        self.manifestReset = manifestReset
    }

    /// The number of files and entries removed, in all categories.
    public var repairedCount: Int {
        orphanFilesRemoved + unexpectedEntriesRemoved
            + missingFileEntriesRemoved + damagedEntriesRemoved
    }

    /// Whether nothing needed repairing.
    public var isClean: Bool {
        repairedCount == 0 && !totalsCorrected && !manifestReset
    }

    /// A one-line English summary of what was repaired, or
    /// `"consistent: nothing to repair"`.
    public var description: String {
        if isClean { return "consistent: nothing to repair" }
        var parts: [String] = []
        if manifestReset { parts.append("manifest damaged: set aside, cache restarted empty") }
        if orphanFilesRemoved > 0 { parts.append("\(orphanFilesRemoved) orphan files removed") }
        if unexpectedEntriesRemoved > 0 { parts.append("\(unexpectedEntriesRemoved) unexpected entries removed") }
        if missingFileEntriesRemoved > 0 { parts.append("\(missingFileEntriesRemoved) entries with missing files removed") }
        if damagedEntriesRemoved > 0 { parts.append("\(damagedEntriesRemoved) damaged entries removed") }
        if totalsCorrected { parts.append("totals recomputed") }
        return parts.joined(separator: ", ")
    }
}

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
        repairDataDirectory()
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
                        guard now.addingClamped(-status.modificationTime) >= grace else { continue }
                        if Self.unlink(raw, in: directory) { report.orphanFilesRemoved += 1 }
                    }
                }

                // Rows whose file is missing or damaged.
                for (name, row) in referenced {
                    // A row committed after the listing has a file the listing missed.
                    let status = listing[name] ?? (try? FileSystem.entryStatus(name, in: directory))
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

    /// `unlinkat(directory, name, 0)`; `true` if the entry was removed.
    private static func unlink(_ rawName: [CChar], in directory: Int32) -> Bool {
        rawName.withUnsafeBufferPointer { raw in
            guard let name = raw.baseAddress else { return false }
            return unlinkat(directory, name, 0) == 0
        }
    }
}
