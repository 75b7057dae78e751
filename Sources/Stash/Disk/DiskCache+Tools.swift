#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging

// Inspection and repair: used by the `stash` command-line tool, and public for
// apps that want the same.

extension DiskCache {
    /// Statistics about the cache's contents: count, sizes, inline and file
    /// counts, oldest and newest access. Saves pending access times first.
    ///
    /// - Throws: ``StashError`` on a disk failure, or after ``close()``.
    /// - Complexity: O(log n). Blocks on disk I/O. Thread-safe.
    public func stats() throws(StashError) -> DiskStorageStats {
        try core.withStorage { storage throws(StashError) in try storage.stats() }
    }

    /// Runs the consistency check now and returns what it repaired: orphan
    /// files, rows whose file is missing or damaged, wrong totals, and a
    /// manifest that fails SQLite's integrity check.
    ///
    /// The same check runs in the background after the cache opens.
    ///
    /// - Throws: ``StashError`` on a disk failure, or after ``close()``.
    /// - Complexity: O(n + f) for n entries and f files, under the cache's lock.
    ///   Blocks on disk I/O. Thread-safe.
    public func verify() throws(StashError) -> RepairReport {
        try core.withStorage { storage throws(StashError) in try storage.checkConsistency() }
    }

    /// Deletes, on the calling thread, what `removeAll()` moved into the
    /// trash, instead of leaving it to the background.
    ///
    /// - Returns: The number of files and directories deleted.
    /// - Complexity: O(n) in the trash's entries. Thread-safe; takes no lock.
    @discardableResult
    package func emptyTrash() -> Int {
        core.storage.trash.empty()
    }
}

extension DiskCache where Value == Data {
    /// Opens the cache in `directory` without a `DiskCache` (so no background
    /// check runs first and repairs things unreported), runs the consistency
    /// check, empties the trash and closes it.
    ///
    /// - Returns: What was repaired.
    /// - Throws: `StashError`: `.directoryUnusable`, `.databaseFailed`, `.ioFailed`.
    /// - Complexity: O(n + f) for n entries and f files. Blocks on disk I/O.
    package static func verify(directory: String, logger: Logger) throws(StashError) -> RepairReport {
        let storage = try KVStorage(directory: directory, clock: WallClock(), logger: logger)
        defer { storage.close() }
        let report = try storage.checkConsistency()
        storage.emptyTrash()
        return report
    }
}
