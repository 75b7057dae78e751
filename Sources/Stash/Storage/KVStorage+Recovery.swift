#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Opening the manifest, and recovering when it is damaged. What counts as damage, what is set
// aside and trashed, and how several instances sharing the directory agree, is described once,
// in the Stash DocC catalog's "On-disk format" article ("Recovery").

extension KVStorage {
    /// Opens `manifest.sqlite`, creating directories and schema as needed, and
    /// setting aside (once) a manifest that is damaged or unusable.
    ///
    /// - Throws: ``StashError``: `.directoryUnusable`; `.databaseFailed` if SQLite
    ///   fails for another reason (busy past the timeout, I/O error, cannot open);
    ///   `.corrupted` if even a fresh manifest reports damage.
    func openManifest() throws(StashError) {
        try prepareDirectories()
        var hasSetAside = false
        while true {
            // A storage that creates nothing still replaces a manifest it set aside.
            let identity = prepareManifestFile(creating: options.createsMissing || hasSetAside)
            if !hasSetAside, manifestWasEmptied() {
                // SQLite would take an empty file for a new database, and the cache
                // would lose every entry without a word: set it aside like damage.
                hasSetAside = true
                setAsideManifest(
                    expected: identity, label: "corrupt",
                    reason: "it is empty (truncated) while data/ holds files", cause: nil)
                continue
            }
            let outcome: Manifest.OpenOutcome
            do throws(SQLiteError) {
                outcome = try Manifest.open(
                    path: manifestPath, busyTimeout: options.busyTimeout, synchronous: options.synchronous,
                    create: options.createsMissing || hasSetAside
                )
            } catch {
                guard error.isCorruption else {
                    throw StashError(.databaseFailed, "cannot open the manifest \(manifestPath)", cause: error)
                }
                guard !hasSetAside else {
                    throw StashError(.corrupted, "a fresh manifest at \(manifestPath) is reported damaged", cause: error)
                }
                hasSetAside = true
                setAsideManifest(expected: identity, label: "corrupt", reason: "it is damaged or not a database", cause: error)
                continue
            }
            switch outcome {
            case .ready(let connection):
                self.connection = connection
                manifestIdentity = identity ?? (try? FileSystem.entryStatus(manifestPath).identity)
                resetMemoryState()
                return
            case .unusable(let reason):
                guard !hasSetAside else {
                    throw StashError(.databaseFailed, "the manifest at \(manifestPath) is unusable: \(reason)")
                }
                hasSetAside = true
                setAsideManifest(expected: identity, label: "unsupported", reason: reason, cause: nil)
            }
        }
    }

    /// Whether `manifest.sqlite` is an empty file, with no write-ahead log, while
    /// `data/` holds files: the manifest was truncated (a new cache's manifest is
    /// empty only until its schema is written, and its `data/` is empty then; a
    /// live one may be empty with its pages still in the `-wal`).
    func manifestWasEmptied() -> Bool {
        guard let manifest = try? FileSystem.entryStatus(manifestPath), manifest.type == .regular, manifest.size == 0
        else { return false }
        if let wal = try? FileSystem.entryStatus(manifestPath + "-wal"), wal.size > 0 { return false }
        guard let directory = try? FileSystem.openDirectory(dataPath) else { return false }
        defer { FileSystem.closeDescriptor(directory) }
        return !((try? FileSystem.entries(ofDirectory: directory)) ?? []).isEmpty
    }

    /// Creates `manifest.sqlite` with mode 0600 if it is missing (SQLite gives its
    /// `-wal` and `-shm` the same mode), refusing to follow a link. An entry that is
    /// not a regular file (a link, a directory, a FIFO) is moved into the trash.
    ///
    /// Never opens (and so never closes) a descriptor of an existing manifest: SQLite
    /// holds POSIX advisory (`fcntl`) locks on it, and closing ANY descriptor of a
    /// file releases all of the process's locks on that file, including those of
    /// another ``KVStorage`` open in this process (the background consistency check
    /// opens one beside the cache's). Without its shared lock, the other instance
    /// looks absent to other processes: the last one of them to close would take
    /// itself for the last connection, checkpoint without locks and delete the
    /// `-wal` and `-shm` under the live instance, whose later commits other
    /// processes would then not see. So an existing file is only `lstat`ed, and a
    /// missing one is created under a temporary name, closed, then hard-linked into
    /// place (see ``createManifestFile()``).
    ///
    /// - Returns: The file's identity, or `nil` if it could not be inspected or
    ///   created (SQLite will then report why it cannot open it).
    /// - Complexity: O(1): a few `lstat`s, plus creating the file when missing.
    func prepareManifestFile(creating: Bool = true) -> FileSystem.Identity? {
        for _ in 0..<3 {
            let status: FileSystem.Status
            do throws(SystemCallError) {
                status = try FileSystem.entryStatus(manifestPath)
            } catch where error.errno == ENOENT {
                guard creating, createManifestFile() else { return nil }
                continue
            } catch {
                return nil
            }
            if status.type == .regular { return status.identity }
            logger.error("manifest.sqlite is not a regular file; moving it to the trash")
            do {
                try trash.moveIn(manifestPath, label: "manifest-damaged")
            } catch {
                logger.error("cannot move the damaged manifest aside", metadata: ["error": "\(error)"])
                return nil
            }
        }
        return nil
    }

    /// Creates an empty `manifest.sqlite` (mode 0600) unless one exists, without
    /// ever holding a descriptor of a file at that path that SQLite could have open:
    /// the file is created as `.manifest-new-<random>` in the cache directory,
    /// closed, then hard-linked to `manifest.sqlite` (which fails harmlessly if
    /// another instance created it first) and the temporary name removed.
    ///
    /// On a file system without hard links it falls back to `O_CREAT | O_EXCL` on
    /// the final name: the file is new, so only an instance opening it in the
    /// instant before the descriptor is closed could lose its locks.
    ///
    /// - Returns: Whether `manifest.sqlite` may now exist (created here or by
    ///   someone else); `false` if it could not be created.
    private func createManifestFile() -> Bool {
        let temporary = "\(directory)/.manifest-new-\(FileNameGenerator.randomName(hexDigits: 16))"
        guard (try? FileSystem.createEmptyFile(temporary)) == true else { return false }
        defer { _ = try? FileSystem.removeEntry(temporary) }
        // Linked, or someone else's manifest is already there: either way it exists.
        if (try? FileSystem.link(temporary, to: manifestPath)) != nil { return true }
        // No hard links here (EPERM, ENOTSUP, EXDEV…): create the final name directly
        // (true when created, false when it already exists: both mean it is there).
        return (try? FileSystem.createEmptyFile(manifestPath)) != nil
    }

    /// Recovers from corruption found while `action` was under way: sets the
    /// manifest aside and opens an empty one. If reopening fails, the connection
    /// stays `nil` and the next operation tries again.
    func recoverFromCorruption(_ error: SQLiteError, while action: String) {
        setAsideManifest(
            expected: manifestIdentity, label: "corrupt",
            reason: "SQLite reported damage while \(action)", cause: error
        )
        do {
            try openManifest()
        } catch {
            logger.error("cannot reopen the manifest after setting it aside", metadata: ["error": "\(error)"])
        }
    }

    /// Closes the connection, renames the manifest's files aside and moves `data/`
    /// into the trash, unless another instance has already replaced the manifest.
    ///
    /// - Parameters:
    ///   - identity: The manifest file that was found damaged, if known.
    ///   - label: `corrupt` or `unsupported`, part of the set-aside name.
    ///   - reason: Why, for the log.
    ///   - cause: The error that revealed the damage, for the log.
    func setAsideManifest(expected identity: FileSystem.Identity?, label: String, reason: String, cause: (any Error)?) {
        connection?.close()
        connection = nil
        resetMemoryState()
        FileSystem.withExclusiveLock("\(directory)/recovery.lock") {
            if let identity, let current = try? FileSystem.entryStatus(manifestPath).identity, current != identity {
                logger.notice("another instance already replaced the damaged manifest; reopening it")
                return
            }
            moveOldSetAsideManifestsToTrash()
            let seconds = FileSystem.wallClockNow() / 1_000_000_000
            let asideName = "\(Manifest.fileName).\(label)-\(seconds)-\(FileNameGenerator.randomName(hexDigits: 8))"
            for suffix in ["", "-wal", "-shm", "-journal"] {
                do throws(SystemCallError) {
                    try FileSystem.rename(manifestPath + suffix, to: "\(directory)/\(asideName)\(suffix)")
                } catch where error.errno == ENOENT {
                    continue
                } catch {
                    // Could not keep it: delete it rather than reopen a damaged file.
                    logger.error("cannot set the manifest aside; deleting it", metadata: ["error": "\(error)"])
                    _ = try? FileSystem.removeEntry(manifestPath + suffix)
                }
            }
            do {
                try trash.moveIn(dataPath, label: "data")
            } catch {
                logger.error("cannot move data/ to the trash", metadata: ["error": "\(error)"])
            }
            forgetDataDirectory()
            repairDataDirectory()
            logger.error(
                "the cache manifest is unusable; it was set aside and the cache starts empty",
                metadata: [
                    "reason": "\(reason)",
                    "setAsideAs": "\(asideName)",
                    "error": "\(cause.map { "\($0)" } ?? "none")",
                ]
            )
        }
    }

    /// Moves earlier set-aside manifests (`manifest.sqlite.<label>-…`) into the
    /// trash, so at most one damaged copy is kept.
    private func moveOldSetAsideManifestsToTrash() {
        guard let root = try? FileSystem.openDirectory(directory) else { return }
        defer { FileSystem.closeDescriptor(root) }
        guard let entries = try? FileSystem.entries(ofDirectory: root) else { return }
        for entry in entries where entry.name.hasPrefix("\(Manifest.fileName).") {
            _ = try? trash.moveIn("\(directory)/\(entry.name)", label: "old-manifest")
        }
    }

    /// Whether `manifest.sqlite` is still the file this instance opened (one `lstat`).
    func manifestIsCurrent() -> Bool {
        guard let manifestIdentity else { return true }
        return (try? FileSystem.entryStatus(manifestPath).identity) == manifestIdentity
    }

    /// Forgets everything cached in memory about the manifest's contents.
    func resetMemoryState() {
        accessLog.removeAll()
        cachedTotals = nil
    }

    /// The connection, after checking that `manifest.sqlite` is still the file it
    /// has open: if another instance set it aside (it found it damaged) or the
    /// directory was deleted, the manifest is reopened first, so that an
    /// acknowledged write never lands in a file nobody will read.
    ///
    /// - Complexity: O(1): one `lstat`.
    func requireWritableConnection() throws(StashError) -> SQLiteConnection {
        let connection = try requireConnection()
        if manifestIsCurrent() { return connection }
        logger.notice("the manifest was replaced or removed by someone else; reopening it")
        connection.close()
        self.connection = nil
        try openManifest()
        return try requireConnection()
    }
}
