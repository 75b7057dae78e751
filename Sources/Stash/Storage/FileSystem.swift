#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin wrappers over the POSIX calls the disk storage needs: the disk engine's
/// only caller of POSIX file calls (SQLite makes its own).
///
/// Unless a function says otherwise, none follows a symbolic link in the last
/// component of a path (`lstat`, `O_NOFOLLOW`, `AT_SYMLINK_NOFOLLOW`,
/// `unlink`), and every failure is a ``SystemCallError`` carrying `errno`.
///
/// The wrappers on the read and write paths (`openForReading`, `createFile`,
/// `removeEntry(_:in:)`) pass names through `withCString`: handing a `String` to a
/// C pointer parameter directly copies it into a new array on every call (about
/// 400 instructions, a malloc and a free).
///
/// Stateless; every function is safe to call from any thread.
enum FileSystem {
    /// Identifies a file independently of its name: device and inode numbers.
    struct Identity: Hashable, Sendable {
        var device: UInt64
        var inode: UInt64
    }

    /// The type of a directory entry, as `lstat` sees it.
    enum EntryType: Sendable {
        case regular
        case directory
        case symbolicLink
        case other
    }

    /// What `lstat`/`fstat` says about an entry.
    struct Status: Sendable {
        var type: EntryType
        /// The size in bytes.
        var size: Int64
        /// The last modification, in nanoseconds since the Unix epoch.
        var modificationTime: Int64
        var identity: Identity

        init(_ info: stat) {
            switch info.st_mode & mode_t(S_IFMT) {
            case mode_t(S_IFREG): type = .regular
            case mode_t(S_IFDIR): type = .directory
            case mode_t(S_IFLNK): type = .symbolicLink
            default: type = .other
            }
            size = Int64(info.st_size)
            #if canImport(Darwin)
            let time = info.st_mtimespec
            #else
            let time = info.st_mtim
            #endif
            modificationTime = Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec)
            identity = Identity(
                device: UInt64(truncatingIfNeeded: info.st_dev),
                inode: UInt64(truncatingIfNeeded: info.st_ino)
            )
        }
    }

    /// One entry of a directory listing. `rawName` keeps the exact bytes (with a
    /// trailing NUL) so that entries whose names are not valid UTF-8 can still be
    /// removed; `name` is their (possibly repaired) text.
    struct DirectoryEntry: Sendable {
        var name: String
        var rawName: [CChar]
    }

    /// The current `errno` as an error for `call`.
    static func lastError(_ call: String) -> SystemCallError {
        SystemCallError(call: call, errno: errno)
    }

    // MARK: - Status

    /// `lstat(path)`: the entry itself, never a link's target.
    static func entryStatus(_ path: String) throws(SystemCallError) -> Status {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw lastError("lstat") }
        return Status(info)
    }

    /// `stat(path)`: follows symbolic links. Used only for the cache's root
    /// directory, which the caller chose and may legitimately be a link.
    static func followingStatus(_ path: String) throws(SystemCallError) -> Status {
        var info = stat()
        guard stat(path, &info) == 0 else { throw lastError("stat") }
        return Status(info)
    }

    /// `fstatat(directory, name, AT_SYMLINK_NOFOLLOW)`.
    static func entryStatus(_ name: UnsafePointer<CChar>, in directory: Int32) throws(SystemCallError) -> Status {
        var info = stat()
        guard fstatat(directory, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { throw lastError("fstatat") }
        return Status(info)
    }

    /// `fstatat(directory, name, AT_SYMLINK_NOFOLLOW)` for a Swift string name.
    static func entryStatus(_ name: String, in directory: Int32) throws(SystemCallError) -> Status {
        var info = stat()
        guard fstatat(directory, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { throw lastError("fstatat") }
        return Status(info)
    }

    /// `fstat(descriptor)`.
    static func status(ofDescriptor descriptor: Int32) throws(SystemCallError) -> Status {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw lastError("fstat") }
        return Status(info)
    }

    // MARK: - Directories

    /// Creates the directory `path` with `mode` (0700 by default).
    ///
    /// - Returns: `true` if it was created, `false` if an entry of that name
    ///   already existed (of any type: the caller checks).
    static func makeDirectory(_ path: String, mode: mode_t = 0o700) throws(SystemCallError) -> Bool {
        if mkdir(path, mode) == 0 { return true }
        if errno == EEXIST { return false }
        throw lastError("mkdir")
    }

    /// Creates `path` and any missing parents, each with mode 0700 (`mkdir -p`).
    /// Existing components are left as they are.
    static func makeDirectories(_ path: String) throws(SystemCallError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += component
            _ = try makeDirectory(prefix)
            prefix += "/"
        }
    }

    /// Opens the directory `path` for `*at` calls, refusing a symbolic link
    /// (`O_DIRECTORY | O_NOFOLLOW`): `ELOOP` or `ENOTDIR` if it is not a real directory.
    static func openDirectory(_ path: String) throws(SystemCallError) -> Int32 {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { throw lastError("open") }
        return descriptor
    }

    /// Opens the directory `name` inside `parent`, refusing a symbolic link.
    static func openDirectory(_ name: UnsafePointer<CChar>, in parent: Int32) throws(SystemCallError) -> Int32 {
        let descriptor = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { throw lastError("openat") }
        return descriptor
    }

    /// The entries of the open directory `descriptor`, without `.` and `..`.
    /// The descriptor stays open and owned by the caller.
    ///
    /// - Complexity: O(n) in the number of entries.
    static func entries(ofDirectory descriptor: Int32) throws(SystemCallError) -> [DirectoryEntry] {
        let copy = dup(descriptor)
        guard copy >= 0 else { throw lastError("dup") }
        guard let stream = fdopendir(copy) else {
            let error = lastError("fdopendir")
            close(copy)
            throw error
        }
        defer { closedir(stream) }
        rewinddir(stream)
        var result: [DirectoryEntry] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw lastError("readdir") }
                break
            }
            // Read the name in place, up to its NUL: the record readdir returns may be
            // shorter than `struct dirent` (its length is d_reclen), so copying the
            // whole d_name array would read past the end of the directory buffer.
            let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
            let namePointer = UnsafeRawPointer(entry).advanced(by: nameOffset).assumingMemoryBound(to: CChar.self)
            let raw: [CChar] = Array(UnsafeBufferPointer(start: namePointer, count: strlen(namePointer))) + [0]
            if raw == [46, 0] || raw == [46, 46, 0] { continue }  // "." and ".."
            let name = String(decoding: raw.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
            result.append(DirectoryEntry(name: name, rawName: raw))
        }
        return result
    }

    // MARK: - Files

    /// Creates a new file `name` in `directory` for writing: `O_CREAT | O_EXCL`
    /// (never reuses an existing entry), `O_NOFOLLOW`, mode 0600.
    static func createFile(_ name: String, in directory: Int32) throws(SystemCallError) -> Int32 {
        let descriptor = name.withCString { openat(directory, $0, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600) }
        guard descriptor >= 0 else { throw lastError("openat") }
        return descriptor
    }

    /// `O_NOATIME`, which Swift's Glibc module does not export (it sits behind
    /// `_GNU_SOURCE`): the kernel's generic value, the same on x86-64, arm64 and
    /// riscv64. Zero elsewhere.
    #if os(Linux) && (arch(x86_64) || arch(arm64) || arch(riscv64))
    static let noAccessTimeFlag: Int32 = 0o1_000_000
    #else
    static let noAccessTimeFlag: Int32 = 0
    #endif

    /// Opens the existing file `name` in `directory` for reading without following
    /// a symbolic link (`ELOOP`), without blocking on a FIFO (`O_NONBLOCK`), and
    /// close-on-exec.
    ///
    /// On Linux it also passes `O_NOATIME`: the cache keeps its own access times,
    /// and on a file system mounted `relatime` (the default) the first read after
    /// a write would otherwise dirty the inode (the cost: docs/benchmarks.md,
    /// "Primitives"). The kernel refuses the flag (`EPERM`) unless the caller
    /// owns the file; the open is then retried without it.
    static func openForReading(_ name: String, in directory: Int32) throws(SystemCallError) -> Int32 {
        let flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC
        let descriptor = name.withCString { name in
            let descriptor = openat(directory, name, flags | noAccessTimeFlag)
            if descriptor < 0, errno == EPERM, noAccessTimeFlag != 0 {
                return openat(directory, name, flags)
            }
            return descriptor
        }
        guard descriptor >= 0 else { throw lastError("openat") }
        return descriptor
    }

    /// Writes all of `bytes` to `descriptor`, retrying short writes and `EINTR`.
    static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) throws(SystemCallError) {
        guard var pointer = bytes.baseAddress else { return }
        var remaining = bytes.count
        while remaining > 0 {
            // Linux writes at most 0x7ffff000 bytes per call.
            let written = write(descriptor, pointer, min(remaining, 1 << 30))
            if written < 0 {
                if errno == EINTR { continue }
                throw lastError("write")
            }
            if written == 0 { throw SystemCallError(call: "write", errno: EIO) }
            pointer += written
            remaining -= written
        }
    }

    /// Reads a file that should hold `expected` bytes into `buffer`, which has room
    /// for at least one byte more, retrying `EINTR`.
    ///
    /// Asking for one byte more than expected makes a single `read` enough for a
    /// file of the right size: a read of a regular file returns fewer bytes than
    /// asked only at its end, so getting exactly `expected` bytes means the file
    /// ended there, and a longer file fills the extra byte. A read that comes back
    /// short before that is continued.
    ///
    /// - Returns: The number of bytes read: `expected` for a file of that size,
    ///   more for a longer file, less for a shorter one.
    static func readExpecting(
        _ expected: Int, from descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer
    ) throws(SystemCallError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var total = 0
        while total < buffer.count {
            let count = read(descriptor, base + total, min(buffer.count - total, 1 << 30))
            if count < 0 {
                if errno == EINTR { continue }
                throw lastError("read")
            }
            if count == 0 { break }
            total += count
            if total == expected { break }
        }
        return total
    }

    /// `true` if a call returned 0, `false` if it failed with `expected` (the
    /// entry was missing, or already there), and otherwise throws its `errno`.
    private static func succeeded(_ result: Int32, unless expected: Int32, _ call: String) throws(SystemCallError) -> Bool {
        if result == 0 { return true }
        if errno == expected { return false }
        throw lastError(call)
    }

    /// What ``readValue(expecting:from:)`` found.
    enum ValueRead {
        /// The file held exactly the size expected; the bytes, in memory the `Data` owns.
        case complete(Data)
        /// The file ended early (`count` < expected) or held more (`count` = expected + 1).
        case wrongLength(count: Int)
        /// Memory for the value could not be allocated.
        case allocationFailed
    }

    /// Reads a value of `size` bytes from `descriptor` into uninitialised memory
    /// that the returned `Data` then owns: no zeroing, no copy. Asks for one byte
    /// more than `size` (see ``readExpecting(_:from:into:)``), so one `read` both
    /// reads the value and finds the end of a file of the right size, without an
    /// `fstat`.
    ///
    /// The memory is freed in one place, on every path that does not hand it to the `Data`.
    ///
    /// - Parameter size: The expected size; 0 ≤ `size` < `Int.max`.
    /// - Throws: ``SystemCallError`` if `read` fails (`EISDIR` for a directory,
    ///   `EAGAIN` for a FIFO held open for writing).
    /// - Complexity: O(size). Blocks on disk I/O.
    static func readValue(expecting size: Int, from descriptor: Int32) throws(SystemCallError) -> ValueRead {
        guard let memory = malloc(size + 1) else { return .allocationFailed }
        var ownedByData = false
        defer { if !ownedByData { free(memory) } }
        let count = try readExpecting(size, from: descriptor, into: UnsafeMutableRawBufferPointer(start: memory, count: size + 1))
        guard count == size else { return .wrongLength(count: count) }
        guard size > 0 else { return .complete(Data()) }
        ownedByData = true
        return .complete(Data(bytesNoCopy: memory, count: size, deallocator: .free))
    }

    /// `close(descriptor)`, under a name that instance methods called `close` do not shadow.
    ///
    /// - Returns: 0 on success, -1 with `errno` set on failure.
    @discardableResult
    static func closeDescriptor(_ descriptor: Int32) -> Int32 {
        close(descriptor)
    }

    /// `fsync(descriptor)`.
    static func synchronize(_ descriptor: Int32) throws(SystemCallError) {
        #if canImport(Darwin)
        // On Apple platforms `fsync` leaves the data in the drive's cache; `F_FULLFSYNC`
        // flushes it (file systems that refuse it get `fsync`).
        if fcntl(descriptor, F_FULLFSYNC) == 0 { return }
        #endif
        guard fsync(descriptor) == 0 else { throw lastError("fsync") }
    }

    /// Renames the entry at path `from` to path `to` (the entry itself: a link is
    /// moved as a link).
    static func rename(_ from: String, to: String) throws(SystemCallError) {
        guard posixRename(from, to) == 0 else { throw lastError("rename") }
    }

    /// Removes the non-directory entry `name` from `directory` (a link is removed,
    /// never its target).
    ///
    /// - Returns: `false` if there was no such entry.
    @discardableResult
    static func removeEntry(_ name: String, in directory: Int32) throws(SystemCallError) -> Bool {
        try succeeded(name.withCString { unlinkat(directory, $0, 0) }, unless: ENOENT, "unlinkat")
    }

    /// Removes the entry `name` (a C string, as listed) from `directory`: a
    /// non-directory entry, or an empty directory when `isDirectory` (a link is
    /// removed, never its target).
    ///
    /// - Returns: `false` if there was no such entry.
    @discardableResult
    static func removeEntry(
        _ name: UnsafePointer<CChar>, in directory: Int32, isDirectory: Bool = false
    ) throws(SystemCallError) -> Bool {
        try succeeded(unlinkat(directory, name, isDirectory ? AT_REMOVEDIR : 0), unless: ENOENT, "unlinkat")
    }

    /// Removes the empty directory at `path`. `false` if there was no such entry.
    @discardableResult
    static func removeDirectory(_ path: String) throws(SystemCallError) -> Bool {
        try succeeded(rmdir(path), unless: ENOENT, "rmdir")
    }

    /// Moves the entry `name` (a C string, as listed) from directory `source` to
    /// the same name in directory `target`.
    static func move(_ name: UnsafePointer<CChar>, from source: Int32, to target: Int32) throws(SystemCallError) {
        guard renameat(source, name, target, name) == 0 else { throw lastError("renameat") }
    }

    /// Creates an empty file at `path` (mode 0600, `O_CREAT | O_EXCL | O_NOFOLLOW`)
    /// and closes it at once.
    ///
    /// - Returns: `false` if an entry already exists there.
    @discardableResult
    static func createEmptyFile(_ path: String) throws(SystemCallError) -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if descriptor < 0 {
            if errno == EEXIST { return false }
            throw lastError("open")
        }
        close(descriptor)
        return true
    }

    /// Makes `to` a hard link to the file at `from`.
    ///
    /// - Returns: `false` if an entry already exists at `to`.
    @discardableResult
    static func link(_ from: String, to: String) throws(SystemCallError) -> Bool {
        try succeeded(posixLink(from, to), unless: EEXIST, "link")
    }

    /// Removes the entry at `path` if it is not a directory (a link is removed,
    /// never its target). `false` if there was no such entry.
    @discardableResult
    static func removeEntry(_ path: String) throws(SystemCallError) -> Bool {
        try succeeded(unlink(path), unless: ENOENT, "unlink")
    }

    // MARK: - Misc

    /// The bytes available to unprivileged users on the file system holding `path`
    /// (`statvfs`: `f_bavail * f_frsize`), saturating at `Int.max`.
    static func availableSpace(at path: String) throws(SystemCallError) -> Int {
        #if canImport(Darwin)
        // Darwin's statvfs has 32-bit block counts, which wrap on large volumes; statfs's do not.
        var info = statfs()
        guard statfs(path, &info) == 0 else { throw lastError("statfs") }
        let (bytes, overflow) = UInt64(info.f_bavail).multipliedReportingOverflow(by: UInt64(info.f_bsize))
        #else
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { throw lastError("statvfs") }
        let (bytes, overflow) = UInt64(info.f_bavail).multipliedReportingOverflow(by: UInt64(info.f_frsize))
        #endif
        return overflow ? .max : Int(clamping: bytes)
    }

    /// The wall-clock time in nanoseconds since the Unix epoch, the scale of file
    /// modification times (independent of any injected ``CacheClock``).
    static func wallClockNow() -> Int64 {
        WallClock().nanosecondsNow
    }

    /// Runs `body` while holding an exclusive `flock` on the file `path` (created
    /// 0600 if missing), serialising it with other processes doing the same.
    /// If the lock file cannot be opened or locked, runs `body` unlocked.
    static func withExclusiveLock<Result>(_ path: String, _ body: () -> Result) -> Result {
        let descriptor = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return body() }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 && errno == EINTR {}
        defer { flock(descriptor, LOCK_UN) }
        return body()
    }
}

/// `rename(2)`, under a name that does not clash with ``FileSystem/rename(_:to:)``.
@inline(__always)
private func posixRename(_ from: String, _ to: String) -> Int32 {
    rename(from, to)
}

/// `link(2)`, under a name that does not clash with ``FileSystem/link(_:to:)``.
@inline(__always)
private func posixLink(_ from: String, _ to: String) -> Int32 {
    link(from, to)
}
