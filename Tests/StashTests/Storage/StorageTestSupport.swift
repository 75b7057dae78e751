import Foundation
import Logging
@testable import Stash

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A temporary cache directory with a manual clock and a log recorder, from which
/// tests open ``KVStorage`` instances.
struct StorageFixture {
    let directory: TemporaryDirectory
    let clock = ManualClock(start: 1_000_000_000_000)
    let log = LogRecorder()

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// The cache directory (a subdirectory, so tests can also see it being created).
    var path: String { directory.appending("cache") }
    var dataPath: String { "\(path)/data" }
    var trashPath: String { "\(path)/trash" }
    var manifestPath: String { "\(path)/manifest.sqlite" }

    /// Opens a storage on the fixture's directory.
    func open(kind: DiskStorageKind = .default, options: KVStorageOptions = KVStorageOptions()) throws -> KVStorage {
        try KVStorage(directory: path, kind: kind, clock: clock, logger: log.logger, options: options)
    }

    /// The names in `data/`, sorted.
    func dataFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dataPath)) ?? []).sorted()
    }

    /// The names in `trash/`, sorted.
    func trashEntries() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: trashPath)) ?? []).sorted()
    }

    /// The names in the cache directory, sorted.
    func rootEntries() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    /// Opens the manifest with a raw connection, for inspecting or tampering.
    func rawConnection() throws -> SQLiteConnection {
        try SQLiteConnection(path: manifestPath, busyTimeout: .seconds(5))
    }

    /// The `filename` column of `key`'s row, or `nil` (inline or absent).
    func filename(of key: String) throws -> String? {
        try rawConnection().storedFilename(of: key)
    }

    /// The stored `last_access_time` of `key`'s row.
    func storedAccessTime(of key: String) throws -> Int64? {
        let connection = try rawConnection()
        return try connection.withStatement("SELECT last_access_time FROM manifest WHERE key = ?1") { statement throws(SQLiteError) in
            try statement.bind(key, at: 1)
            return try statement.step() == .row ? statement.int64(at: 0) : nil
        }
    }
}

/// `count` deterministic bytes derived from `seed`.
func testBytes(_ count: Int, seed: UInt8 = 1) -> Data {
    Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed) &* 7) })
}

/// Sets the modification time of the entry at `path` (not following links) to
/// `secondsAgo` seconds before now.
func setModificationTime(of path: String, secondsAgo: Int) {
    var times = [timespec](repeating: timespec(), count: 2)
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    times[0] = timespec(tv_sec: now.tv_sec - secondsAgo, tv_nsec: 0)
    times[1] = times[0]
    utimensat(AT_FDCWD, path, times, AT_SYMLINK_NOFOLLOW)
}

/// The permission bits of the entry at `path`.
func permissions(of path: String) -> Int {
    var info = stat()
    guard lstat(path, &info) == 0 else { return -1 }
    return Int(info.st_mode & 0o777)
}

/// Writes `bytes` to the file at `path`, replacing it.
func writeFile(_ path: String, _ bytes: Data) throws {
    try bytes.write(to: URL(fileURLWithPath: path))
}

/// The contents of the file at `path`.
func readFile(_ path: String) throws -> Data {
    try Data(contentsOf: URL(fileURLWithPath: path))
}

extension SQLiteConnection {
    /// The `filename` column of `key`'s manifest row, or `nil` (inline or absent).
    func storedFilename(of key: String) throws(SQLiteError) -> String? {
        try withStatement("SELECT filename FROM manifest WHERE key = ?1") { statement throws(SQLiteError) in
            try statement.bind(key, at: 1)
            return try statement.step() == .row ? statement.text(at: 0) : nil
        }
    }
}
