import CSQLiteBench
import Foundation
import Stash
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The DiskCache issue's design built bare, through SQLite's C API: the
/// manifest table with the columns (`key` its primary key), an index on
/// `last_access_time` and a partial one on `expiration_time` (only rows that
/// have one), WAL and synchronous=NORMAL; values up to DiskCache's default
/// inline threshold inline, larger ones in `data/`, each write a new file
/// (`O_CREAT | O_EXCL`, a counter for a name) followed by one autocommit
/// `INSERT OR REPLACE`; a read is one
/// `SELECT` by key, then for a file value `open`, `read` of the size the row
/// gives, `close`.
///
/// What it leaves out is everything a cache needs beyond that: totals kept for
/// the limits, deleting a replaced value's file, checking that a file is still
/// the live one before its row commits, validating what it reads, a `Data` to
/// return. So it is the floor for any implementation of that design: what the
/// manifest itself costs on this machine. Where it misses a target, no code
/// around such a manifest can meet it here.
public final class BareManifestStore: DiskStoreUnderTest {
    public static var displayName: String { "bare manifest" }
    public static var shortName: String { "manifest" }
    public static var isFloor: Bool { false }

    /// Values larger than this go to files, as in DiskCache's `.default` kind.
    static let inlineThreshold = DiskStorageKind.defaultInlineThreshold

    private let database: RawSQLite
    private let insert: OpaquePointer?
    private let select: OpaquePointer?
    private let keys: [[UInt8]]
    private let dataDirectory: String
    private var dataDescriptor: Int32
    private var nextFileNumber: UInt64 = 0

    public init(directory: String, keys: [String]) throws {
        self.keys = keys.map { Array($0.utf8) }
        dataDirectory = (directory as NSString).appendingPathComponent("data")
        if mkdir(dataDirectory, 0o700) != 0 && errno != EEXIST { throw posixError("mkdir", dataDirectory) }
        dataDescriptor = open(dataDirectory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dataDescriptor < 0 { throw posixError("open", dataDirectory) }
        database = try RawSQLite(path: (directory as NSString).appendingPathComponent("manifest.sqlite"))
        try database.execute("""
            CREATE TABLE manifest (key TEXT PRIMARY KEY NOT NULL, filename TEXT, size INTEGER NOT NULL,
                inline_data BLOB, modification_time INTEGER NOT NULL, last_access_time INTEGER NOT NULL,
                expiration_time INTEGER, extended_data BLOB);
            CREATE INDEX manifest_last_access_time ON manifest(last_access_time);
            CREATE INDEX manifest_expiration_time ON manifest(expiration_time) WHERE expiration_time IS NOT NULL;
            """)
        insert = try database.prepare("""
            INSERT OR REPLACE INTO manifest (key, filename, size, inline_data, modification_time, last_access_time)
            VALUES (?1, ?2, ?3, ?4, ?5, ?5)
            """)
        select = try database.prepare("SELECT filename, size, inline_data FROM manifest WHERE key = ?1")
    }

    public func write(_ index: Int, _ value: DiskValue) throws {
        let bytes = value.bytes
        var filename: [CChar]?
        if bytes.count > Self.inlineThreshold {
            nextFileNumber += 1
            let name = Array(String(nextFileNumber, radix: 16).utf8CString)
            let fd = openat(dataDescriptor, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if fd < 0 { throw posixError("openat", dataDirectory) }
            defer { closeDescriptor(fd) }
            try writeAll(fd, bytes, path: dataDirectory)
            filename = name
        }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let time = Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
        // Bound without copies: the name outlives the step.
        try (filename ?? []).withUnsafeBufferPointer { name in
            try database.write(insert, key: keys[index]) { insert in
                if filename != nil {
                    sqlite3_bind_text(insert, 2, name.baseAddress, Int32(name.count - 1), nil)
                    sqlite3_bind_null(insert, 4)
                } else {
                    sqlite3_bind_null(insert, 2)
                    sqlite3_bind_blob(insert, 4, bytes.baseAddress, Int32(bytes.count), nil)
                }
                sqlite3_bind_int64(insert, 3, Int64(bytes.count))
                sqlite3_bind_int64(insert, 5, time)
            }
        }
    }

    public func read(_ index: Int, into buffer: UnsafeMutableRawBufferPointer) throws -> Int? {
        try database.read(select, key: keys[index]) { row in
            guard let name = sqlite3_column_text(row, 0) else {
                return RawSQLite.copyBlob(row, column: 2, into: buffer)
            }
            let size = min(Int(sqlite3_column_int64(row, 1)), buffer.count)
            let fd = name.withMemoryRebound(to: CChar.self, capacity: 1) {
                openat(dataDescriptor, $0, O_RDONLY | O_CLOEXEC)
            }
            if fd < 0 { throw posixError("openat", dataDirectory) }
            defer { closeDescriptor(fd) }
            return try readAll(fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<size]), path: dataDirectory)
        }
    }

    public func close() {
        database.close(finalizing: [insert, select])
        closeDescriptor(dataDescriptor)
        dataDescriptor = -1
    }
}
