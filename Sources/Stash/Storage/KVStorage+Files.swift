#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The files under data/: writing, reading, deleting, and keeping the directories sound.
//
// Every access goes through a descriptor of data/ opened with O_DIRECTORY|O_NOFOLLOW,
// then *at() calls with O_NOFOLLOW/AT_SYMLINK_NOFOLLOW or unlinkat(), so neither a
// data/ replaced by a link nor a data file replaced by a link is ever followed.
//
// The descriptor is kept open (DataDirectory) rather than opened per operation: that
// saves an open, a close and a path lookup on every file read and write. removeAll()
// (in this or another instance) renames data/ into the trash and creates a new one,
// which leaves a kept descriptor pointing at the old directory. So the descriptor is
// checked against the path wherever that matters: a write compares data/'s identity
// inside its transaction (isLive), and a read or delete that finds no file looks
// again through a fresh descriptor before concluding the file is gone.

extension KVStorage {
    /// A value file just written into `data/`.
    struct DataFile {
        /// The file's name inside `data/`: 32 random hex digits.
        var name: String
        /// The `data/` directory it was written into, to notice if that directory
        /// has since been moved to the trash.
        var directoryIdentity: FileSystem.Identity
    }

    /// An open descriptor of `data/` and the directory's identity when it was opened.
    struct DataDirectory {
        var descriptor: Int32
        var identity: FileSystem.Identity
    }

    /// What reading a value's file found.
    enum FileRead {
        /// The file's bytes, exactly as many as the row records.
        case success(Data)
        /// The file is missing, truncated, or not a regular file: the entry is lost.
        case damaged(String)
    }

    // MARK: - Directories

    /// Creates the cache directory (and parents), `data/` and `trash/` as needed,
    /// each with mode 0700. A `data/` or `trash/` that is not a real directory (a
    /// plain file, a symbolic link) is moved aside or unlinked, never followed.
    ///
    /// - Throws: ``StashError/Code/directoryUnusable``.
    func prepareDirectories() throws(StashError) {
        guard options.createsMissing else { return try requireDirectories() }
        let root: FileSystem.Status
        do {
            try FileSystem.makeDirectories(directory)
            root = try FileSystem.followingStatus(directory)
        } catch {
            throw StashError(.directoryUnusable, "cannot create the cache directory \(directory)", cause: error)
        }
        guard root.type == .directory else {
            throw StashError(.directoryUnusable, "\(directory) exists and is not a directory")
        }
        do {
            if let status = try? FileSystem.entryStatus(trash.path), status.type != .directory {
                logger.warning("trash/ is not a directory; removing the entry")
                try FileSystem.removeEntry(trash.path)
            }
            _ = try FileSystem.makeDirectory(trash.path)
        } catch {
            throw StashError(.directoryUnusable, "cannot create \(trash.path)", cause: error)
        }
        repairDataDirectory()
        guard let status = try? FileSystem.entryStatus(dataPath), status.type == .directory else {
            throw StashError(.directoryUnusable, "cannot create \(dataPath)")
        }
    }

    /// ``prepareDirectories()`` for a storage that creates nothing
    /// (``KVStorageOptions/createsMissing`` off): the directory and `data/` must
    /// be there already, as directories.
    private func requireDirectories() throws(StashError) {
        for path in [directory, dataPath] {
            guard let status = try? FileSystem.followingStatus(path), status.type == .directory else {
                throw StashError(.directoryUnusable, "\(path) is not there (or not a directory), and this storage creates nothing")
            }
        }
    }

    /// Makes sure `data/` is a real directory: an entry of another type (a plain
    /// file, a symbolic link) is moved into the trash, as an entry, and a new empty
    /// directory is created. The entries of the manifest whose files were there read
    /// as misses and are removed.
    func repairDataDirectory() {
        if let status = try? FileSystem.entryStatus(dataPath) {
            if status.type == .directory { return }
            forgetDataDirectory()
            logger.error("data/ is not a directory; moving it to the trash and starting an empty one",
                         metadata: ["type": "\(status.type)"])
            do {
                try trash.moveIn(dataPath, label: "data-damaged")
            } catch {
                logger.error("cannot move the damaged data/ aside", metadata: ["error": "\(error)"])
                return
            }
        }
        do {
            _ = try FileSystem.makeDirectory(dataPath)
        } catch {
            logger.error("cannot create data/", metadata: ["error": "\(error)"])
        }
    }

    // MARK: - The data/ descriptor

    /// The kept descriptor of `data/`, opening it first if there is none.
    ///
    /// - Throws: ``SystemCallError`` from `open` or `fstat` (`ENOENT` if `data/` is
    ///   missing, `ENOTDIR` or `ELOOP` if it is not a real directory).
    func dataDirectory() throws(SystemCallError) -> DataDirectory {
        if let openDataDirectory { return openDataDirectory }
        let descriptor = try FileSystem.openDirectory(dataPath)
        do throws(SystemCallError) {
            let directory = DataDirectory(descriptor: descriptor, identity: try FileSystem.status(ofDescriptor: descriptor).identity)
            openDataDirectory = directory
            return directory
        } catch {
            FileSystem.closeDescriptor(descriptor)
            throw error
        }
    }

    /// Closes the kept descriptor of `data/`; the next file operation opens the
    /// directory now at `dataPath`.
    func forgetDataDirectory() {
        if let openDataDirectory {
            FileSystem.closeDescriptor(openDataDirectory.descriptor)
            self.openDataDirectory = nil
        }
    }

    /// Whether the kept descriptor no longer refers to the directory at `dataPath`
    /// (another instance moved it to the trash, or it was replaced). If so, the
    /// descriptor is forgotten, and the caller should look again.
    func dataDirectoryWasReplaced() -> Bool {
        guard let openDataDirectory else { return false }
        if dataPathIsDirectory(openDataDirectory.identity) { return false }
        forgetDataDirectory()
        return true
    }

    /// Whether the entry at `dataPath` is a directory, and the one with `identity`
    /// (one `lstat`; a link is not followed). `removeAll()` replaces `data/` inside
    /// its write transaction, so inside another write transaction the answer holds
    /// until that transaction ends.
    func dataPathIsDirectory(_ identity: FileSystem.Identity) -> Bool {
        guard let status = try? FileSystem.entryStatus(dataPath), status.type == .directory else { return false }
        return status.identity == identity
    }

    // MARK: - Writing

    /// Writes `value` to a new file in `data/` under a fresh name (created with
    /// `O_CREAT | O_EXCL | O_NOFOLLOW`, mode 0600), `fsync`ing the file and
    /// `data/` if ``KVStorageOptions/synchronous``.
    ///
    /// The file is written directly under its final name: no row refers to that
    /// name until the caller's transaction commits, so nothing can read the file
    /// before it is complete, and the commit itself is the atomic step that
    /// publishes it. (A rename from a temporary name would add a system call and
    /// no safety.) A crash before the commit leaves an unreferenced file, which
    /// ``checkConsistency()`` removes once it is older than the grace period.
    ///
    /// If `data/` is missing or is not a directory it is repaired and the write
    /// retried once.
    ///
    /// - Returns: The file, not yet referenced by any row.
    /// - Throws: ``StashError/Code/ioFailed`` with the ``SystemCallError``.
    func writeDataFile(_ value: Data, forKey key: String) throws(StashError) -> DataFile {
        var repaired = false
        while true {
            do throws(SystemCallError) {
                return try writeDataFileOnce(value)
            } catch {
                if !repaired, [ENOENT, ENOTDIR, ELOOP].contains(error.errno) {
                    repaired = true
                    forgetDataDirectory()
                    repairDataDirectory()
                    continue
                }
                throw StashError(
                    .ioFailed, "cannot write the file for \(Self.describe(key)) in \(dataPath): \(error.reason)", cause: error)
            }
        }
    }

    /// One attempt of ``writeDataFile(_:forKey:)``. On failure nothing is left behind.
    private func writeDataFileOnce(_ value: Data) throws(SystemCallError) -> DataFile {
        let directory = try dataDirectory()
        var name = fileNames.next()
        var descriptor: Int32
        while true {
            do throws(SystemCallError) {
                descriptor = try FileSystem.createFile(name, in: directory.descriptor)
                break
            } catch where error.errno == EEXIST {
                name = fileNames.next()  // astronomically unlikely; never overwrite
            }
        }
        do throws(SystemCallError) {
            let written = value.withUnsafeBytes { bytes in
                Result { () throws(SystemCallError) in try FileSystem.writeAll(bytes, to: descriptor) }
            }
            try written.get()
            if options.synchronous {
                try FileSystem.synchronize(descriptor)
            }
            let closed = FileSystem.closeDescriptor(descriptor)
            descriptor = -1
            if closed != 0 { throw FileSystem.lastError("close") }
            if options.synchronous {
                try FileSystem.synchronize(directory.descriptor)
            }
        } catch {
            if descriptor >= 0 { FileSystem.closeDescriptor(descriptor) }
            _ = try? FileSystem.removeEntry(name, in: directory.descriptor)
            throw error
        }
        return DataFile(name: name, directoryIdentity: directory.identity)
    }

    /// Whether `file` is still in the live `data/` (the same directory it was
    /// written to, still at `dataPath`) as a regular file. Called inside the write
    /// transaction, so another instance cannot move or delete it before the row
    /// commits. When `data/` was replaced, the kept descriptor is forgotten, so
    /// that the caller's next attempt writes into the new directory.
    func isLive(_ file: DataFile) -> Bool {
        guard dataPathIsDirectory(file.directoryIdentity) else {
            forgetDataDirectory()
            return false
        }
        guard let openDataDirectory, openDataDirectory.identity == file.directoryIdentity,
              let entry = try? FileSystem.entryStatus(file.name, in: openDataDirectory.descriptor)
        else { return false }
        return entry.type == .regular
    }

    // MARK: - Reading

    /// The value size above which ``readDataFile(_:expectedSize:forKey:)`` checks
    /// the file's size with `fstat` before allocating: 16 MiB.
    static let sizeCheckedBeforeAllocating = 16 << 20

    /// Reads the file `name`, which must hold exactly `expectedSize` bytes.
    ///
    /// Opens with ``FileSystem/openForReading(_:in:)`` (a link is refused, a FIFO
    /// does not block, the access time is not updated), then reads one byte more
    /// than expected to check the size in the same `read`
    /// (``FileSystem/readExpecting(_:from:into:)``). A directory or a FIFO in the
    /// file's place fails that read or reads short; only a privileged user can put
    /// a device node there.
    ///
    /// - Returns: The bytes, or ``FileRead/damaged(_:)`` with the reason when the
    ///   file is missing, truncated, a link or not a regular file.
    /// - Throws: ``StashError/Code/ioFailed`` for failures that do not mean the file
    ///   is damaged (too many open files, permission denied, an I/O error): the
    ///   entry must not be dropped for those.
    func readDataFile(_ name: String, expectedSize: Int, forKey key: String) throws(StashError) -> FileRead {
        guard Self.isDataFileName(name) else { return .damaged("the row names a file outside data/") }
        var descriptor: Int32 = -1
        var openError: SystemCallError?
        // Twice at most: a missing file is looked for again in the directory now at
        // dataPath if the kept descriptor turns out to be of a replaced one.
        for _ in 0..<2 {
            let directory: DataDirectory
            do {
                directory = try dataDirectory()
            } catch {
                switch error.errno {
                case ENOENT:
                    return .damaged("data/ is missing")
                case ENOTDIR, ELOOP:
                    repairDataDirectory()
                    return .damaged("data/ was not a directory")
                default:
                    throw StashError(.ioFailed, "cannot open \(dataPath)", cause: error)
                }
            }
            do {
                descriptor = try FileSystem.openForReading(name, in: directory.descriptor)
                openError = nil
                break
            } catch {
                openError = error
                if error.errno != ENOENT || !dataDirectoryWasReplaced() { break }
            }
        }
        if let openError {
            switch openError.errno {
            case ENOENT: return .damaged("the file is missing")
            case ELOOP, EMLINK: return .damaged("the file was replaced by a symbolic link")
            // A socket is ENXIO on Linux, EOPNOTSUPP on Apple platforms.
            case ENXIO, EISDIR, EOPNOTSUPP: return .damaged("the file is not a regular file")
            default:
                throw StashError(.ioFailed, "cannot open the file of \(Self.describe(key))", cause: openError)
            }
        }
        defer { FileSystem.closeDescriptor(descriptor) }
        return try Self.readValueFile(descriptor, expectedSize: expectedSize, forKey: key)
    }

    /// Reads the value file open at `descriptor`, which the row of `key` says holds
    /// `expectedSize` bytes: ``readDataFile(_:expectedSize:forKey:)``'s reading, and
    /// ``ManifestReader``'s.
    static func readValueFile(_ descriptor: Int32, expectedSize: Int, forKey key: String) throws(StashError) -> FileRead {
        // One read into memory the Data then owns (FileSystem.readValue).
        guard expectedSize >= 0, expectedSize < Int.max else {
            return .damaged("the row records an impossible size, \(expectedSize) bytes")
        }
        // A damaged row could record any size. Past 16 MiB, where one more system
        // call is noise beside the read, the file's real size is checked before
        // allocating that much.
        if expectedSize > Self.sizeCheckedBeforeAllocating {
            do {
                let size = try FileSystem.status(ofDescriptor: descriptor).size
                guard size == Int64(expectedSize) else {
                    return .damaged("the file holds \(size) bytes, \(expectedSize) expected")
                }
            } catch {
                throw StashError(.ioFailed, "cannot inspect the file of \(Self.describe(key))", cause: error)
            }
        }
        let read: FileSystem.ValueRead
        do {
            read = try FileSystem.readValue(expecting: expectedSize, from: descriptor)
        } catch {
            switch error.errno {
            // A directory, or a FIFO that another process holds open for writing
            // (opened with O_NONBLOCK, an idle FIFO reads as empty).
            case EISDIR, EAGAIN: return .damaged("the file is not a regular file")
            default: throw StashError(.ioFailed, "cannot read the file of \(Self.describe(key))", cause: error)
            }
        }
        switch read {
        case .complete(let bytes):
            return .success(bytes)
        case .wrongLength(let count):
            return .damaged(
                count > expectedSize
                    ? "the file holds more than the \(expectedSize) bytes expected"
                    : "the file ended after \(count) of \(expectedSize) bytes")
        case .allocationFailed:
            throw StashError(.ioFailed, "cannot allocate \(expectedSize) bytes for \(Self.describe(key))")
        }
    }

    /// Whether `name`, read from a row, can name an entry of `data/` and nothing else: one
    /// path component, not `.` or `..`. Every name Stash writes is 32 hex digits; a damaged row
    /// (a disk fault, another process) may hold anything, and a name such as
    /// `../manifest.sqlite` must never be read, or worse deleted, relative to `data/`.
    static func isDataFileName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".."
            && !name.utf8.contains(UInt8(ascii: "/")) && !name.utf8.contains(0)
    }

    // MARK: - Deleting

    /// Deletes the entry `name` from `data/` with `unlinkat` (a link is removed as a
    /// link). A missing file is fine (after looking again if `data/` was replaced);
    /// other failures are logged, and the file is then an orphan that
    /// ``checkConsistency()`` removes later.
    func removeDataFile(_ name: String) {
        guard Self.isDataFileName(name) else { return }  // a damaged row's name: never outside data/
        do {
            if try !FileSystem.removeEntry(name, in: dataDirectory().descriptor), dataDirectoryWasReplaced() {
                _ = try FileSystem.removeEntry(name, in: dataDirectory().descriptor)
            }
        } catch {
            if error.errno != ENOENT {
                logger.warning("cannot delete a value's file", metadata: ["file": "\(name)", "error": "\(error)"])
            }
        }
    }
}
