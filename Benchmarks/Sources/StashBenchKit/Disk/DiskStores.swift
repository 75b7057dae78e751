import CSQLiteBench
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value to write, in both forms a store may take: the `Data` that a caller
/// of a Data-based API holds, and its bytes. Built before any timing.
public struct DiskValue {
    public let data: Data
    public let bytes: UnsafeRawBufferPointer
}

/// What a disk workload drives: a store of byte values under String keys in a
/// directory of its own. Keys are addressed by index into a table given at
/// creation, from which each store derives what it needs (paths, C strings)
/// before any timing; creation is never timed. Reads go into a caller's buffer
/// where the store's API allows it (the baselines), so such a read allocates
/// nothing the store does not itself allocate; `DiskCache` returns a `Data`.
///
/// Conformers: the baselines here, and `DiskCacheStore` (Stash's DiskCache, once
/// per storage kind).
public protocol DiskStoreUnderTest: AnyObject {
    static var displayName: String { get }
    static var shortName: String { get }
    static var isFloor: Bool { get }
    init(directory: String, keys: [String]) throws
    func write(_ index: Int, _ value: DiskValue) throws
    /// The number of bytes read into `buffer`, or nil when the key is absent.
    func read(_ index: Int, into buffer: UnsafeMutableRawBufferPointer) throws -> Int?
    func close()
}

/// The error for a failed `call` on `path`; `path` is only built here, on failure,
/// so that timed loops never pay for it.
func posixError(_ call: String, _ path: @autoclosure () -> String) -> BenchError {
    let code = errno
    return BenchError("\(call)(\(path())) failed: \(String(cString: strerror(code)))")
}

/// A NUL-terminated path, for error messages.
func describe(_ path: [CChar]) -> String {
    String(decoding: path.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

func closeDescriptor(_ fd: Int32) {
    _ = close(fd)
}

/// Opens `path` read-only; `nil` if it does not exist.
func openForReading(_ path: [CChar]) throws -> Int32? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    if fd < 0 {
        if errno == ENOENT { return nil }
        throw posixError("open", describe(path))
    }
    return fd
}

/// Writes all of `bytes` to `fd`.
func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: @autoclosure () -> String) throws {
    var offset = 0
    while offset < bytes.count {
        let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
        if written < 0 {
            if errno == EINTR { continue }
            throw posixError("write", path())
        }
        offset += written
    }
}

/// Reads `fd` to its end or the buffer's, whichever comes first.
func readAll(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, path: @autoclosure () -> String) throws -> Int {
    var offset = 0
    while offset < buffer.count {
        let got = read(fd, buffer.baseAddress! + offset, buffer.count - offset)
        if got < 0 {
            if errno == EINTR { continue }
            throw posixError("read", path())
        }
        if got == 0 { break }
        offset += got
    }
    return offset
}

/// Raw file read/write: one file per key named by the key in one flat folder,
/// written in place (open with O_TRUNC, write, close): no atomicity, no
/// metadata, no limits. What a file-based cache pays at least. (Not marked as
/// the section's floor: SQLite's appends to its write-ahead log can beat
/// creating a file per value.)
public final class RawFileStore: DiskStoreUnderTest {
    public static var displayName: String { "raw files" }
    public static var shortName: String { "raw" }
    public static var isFloor: Bool { false }

    private let paths: [[CChar]]

    public init(directory: String, keys: [String]) throws {
        paths = keys.map { Array((directory as NSString).appendingPathComponent($0).utf8CString) }
    }

    public func write(_ index: Int, _ value: DiskValue) throws {
        let bytes = value.bytes
        let fd = open(paths[index], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        if fd < 0 { throw posixError("open", describe(paths[index])) }
        defer { closeDescriptor(fd) }
        try writeAll(fd, bytes, path: describe(paths[index]))
    }

    public func read(_ index: Int, into buffer: UnsafeMutableRawBufferPointer) throws -> Int? {
        guard let fd = try openForReading(paths[index]) else { return nil }
        defer { closeDescriptor(fd) }
        return try readAll(fd, into: buffer, path: describe(paths[index]))
    }

    public func close() {}
}

/// A minimal one-file-per-key store as file-based caches build them: the file
/// name is a hash of the key (FNV-1a, hex) in one of 256 shard folders; a write
/// goes to a temporary file that is renamed over the old one (readers never see
/// a torn value); a read opens, fstats for the size, reads.
public final class FilePerKeyStore: DiskStoreUnderTest {
    public static var displayName: String { "file per key" }
    public static var shortName: String { "files" }
    public static var isFloor: Bool { false }

    private let paths: [[CChar]]
    private let temporaryPaths: [[CChar]]

    public init(directory: String, keys: [String]) throws {
        for shard in 0..<256 {
            let path = (directory as NSString).appendingPathComponent(String(format: "%02x", shard))
            if mkdir(path, 0o755) != 0 && errno != EEXIST { throw posixError("mkdir", path) }
        }
        var paths: [[CChar]] = [], temporaryPaths: [[CChar]] = []
        for key in keys {
            var hash: UInt64 = 0xCBF2_9CE4_8422_2325
            for byte in key.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
            let name = String(format: "%016llx", hash)
            let path = (directory as NSString).appendingPathComponent("\(name.prefix(2))/\(name)")
            paths.append(Array(path.utf8CString))
            temporaryPaths.append(Array((path + ".tmp").utf8CString))
        }
        self.paths = paths
        self.temporaryPaths = temporaryPaths
    }

    public func write(_ index: Int, _ value: DiskValue) throws {
        let bytes = value.bytes
        let temporary = temporaryPaths[index]
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        if fd < 0 { throw posixError("open", describe(temporary)) }
        do {
            try writeAll(fd, bytes, path: describe(temporary))
        } catch {
            closeDescriptor(fd)
            throw error
        }
        closeDescriptor(fd)
        if rename(temporary, paths[index]) != 0 { throw posixError("rename", describe(temporary)) }
    }

    public func read(_ index: Int, into buffer: UnsafeMutableRawBufferPointer) throws -> Int? {
        guard let fd = try openForReading(paths[index]) else { return nil }
        defer { closeDescriptor(fd) }
        var info = stat()
        if fstat(fd, &info) != 0 { throw posixError("fstat", describe(paths[index])) }
        let size = min(Int(info.st_size), buffer.count)
        return try readAll(fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<size]),
                           path: describe(paths[index]))
    }

    public func close() {}
}

/// Raw SQLite with prepared statements: one `WITHOUT ROWID` table (key TEXT
/// PRIMARY KEY, value BLOB), so that a row lives in the key's B-tree alone; WAL
/// journal, synchronous=NORMAL; each write one autocommit upsert
/// (`INSERT ... ON CONFLICT (key) DO UPDATE`), its own transaction, as a cache
/// writes. The floor for a key-value table in SQLite.
public final class SQLiteStore: DiskStoreUnderTest {
    public static var displayName: String { "SQLite (prepared)" }
    public static var shortName: String { "SQLite" }
    public static var isFloor: Bool { false }

    private let database: RawSQLite
    private let insert: OpaquePointer?
    private let select: OpaquePointer?
    private let keys: [[UInt8]]

    public convenience init(directory: String, keys: [String]) throws {
        try self.init(directory: directory, keyBytes: keys.map { Array($0.utf8) })
    }

    /// Opens (or creates) the store with keys already converted to UTF-8, so that
    /// timing an open does not time the conversion.
    public init(directory: String, keyBytes: [[UInt8]]) throws {
        keys = keyBytes
        database = try RawSQLite(path: (directory as NSString).appendingPathComponent("store.sqlite"))
        try database.execute("CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY NOT NULL, value BLOB NOT NULL) WITHOUT ROWID")
        insert = try database.prepare("INSERT INTO kv (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
        select = try database.prepare("SELECT value FROM kv WHERE key = ?1")
    }

    /// Starts a transaction: writes until `commit()` share it (for filling a store
    /// before a measurement; the workloads write one transaction per value).
    public func begin() throws { try database.execute("BEGIN IMMEDIATE") }
    public func commit() throws { try database.execute("COMMIT") }

    public func write(_ index: Int, _ value: DiskValue) throws {
        let bytes = value.bytes
        try database.write(insert, key: keys[index]) { insert in
            sqlite3_bind_blob(insert, 2, bytes.baseAddress, Int32(bytes.count), nil)
        }
    }

    public func read(_ index: Int, into buffer: UnsafeMutableRawBufferPointer) throws -> Int? {
        try database.read(select, key: keys[index]) { row in RawSQLite.copyBlob(row, column: 0, into: buffer) }
    }

    public func close() {
        database.close(finalizing: [insert, select])
    }
}
