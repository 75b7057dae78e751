#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging

// Inspection and repair: used by the `stash` command-line tool, and public for
// apps that want the same.

extension DiskCache {
    /// What the cache holds on disk: bytes of values, inline and file counts,
    /// oldest and newest access, the manifest's size. Saves pending access times
    /// first. (Lookup counters are ``statistics``.)
    ///
    /// - Throws: ``StashError`` on a disk failure, or after `close()`.
    /// - Complexity: O(log n). Blocks on disk I/O. Thread-safe.
    public func usage() throws(StashError) -> DiskUsage {
        try core.usage()
    }

    /// Runs the consistency check now and returns what it repaired: orphan
    /// files, rows whose file is missing or damaged, wrong totals, and a
    /// manifest that fails SQLite's integrity check.
    ///
    /// The same check runs in the background after the cache opens.
    ///
    /// - Throws: ``StashError`` on a disk failure, or after `close()`.
    /// - Complexity: O(n + f) for n entries and f files, under the cache's lock.
    ///   Blocks on disk I/O. Thread-safe.
    public func verify() throws(StashError) -> RepairReport {
        try core.verify()
    }

    /// Deletes, on the calling thread, what `removeAll()` moved into the
    /// trash, instead of leaving it to the background.
    ///
    /// - Returns: The number of files and directories deleted.
    /// - Complexity: O(n) in the trash's entries. Thread-safe; takes no lock.
    @discardableResult
    package func emptyTrash() -> Int {
        core.emptyTrash()
    }
}

extension DiskCache where Value == Data {
    /// Runs the consistency check on the existing cache in `directory` without a
    /// `DiskCache` (so no background check runs first and repairs things
    /// unreported), then empties the trash. Creates nothing: a directory that is
    /// not a cache's is an error, not a new cache.
    ///
    /// - Returns: What was repaired.
    /// - Throws: `StashError`: `.directoryUnusable`, `.databaseFailed`, `.ioFailed`.
    /// - Complexity: O(n + f) for n entries and f files. Blocks on disk I/O.
    package static func verify(directory: String, logger: Logger) throws(StashError) -> RepairReport {
        try KVStorage.checkConsistency(ofDirectory: directory, clock: WallClock(), logger: logger, emptyingTrash: true)
    }
}
