/// A summary of a disk cache's contents, for tools such as `stash stats`.
///
/// Times are nanoseconds on the cache's clock; for a disk cache using the default
/// ``WallClock`` that is nanoseconds since the Unix epoch.
///
/// A value type: `Sendable`, safe to share between threads.
public struct DiskStorageStats: Sendable, Hashable {
    /// The number of entries, including expired ones not yet removed.
    public var count: Int
    /// The sum of the entries' value sizes, in bytes (keys and extended data excluded).
    public var totalSize: Int
    /// The number of entries whose value is stored inline in the manifest.
    public var inlineCount: Int
    /// The number of entries whose value is stored in a file of its own.
    public var fileCount: Int
    /// The least recent last-access time of any entry; `nil` when empty.
    public var oldestAccessTime: Int64?
    /// The most recent last-access time of any entry; `nil` when empty.
    public var newestAccessTime: Int64?
    /// The bytes the manifest occupies on disk (`manifest.sqlite` and its `-wal`).
    public var manifestBytes: Int

    /// Creates statistics from their parts. Every value defaults to zero or `nil`:
    /// the statistics of an empty cache.
    public init(
        count: Int = 0,
        totalSize: Int = 0,
        inlineCount: Int = 0,
        fileCount: Int = 0,
        oldestAccessTime: Int64? = nil,
        newestAccessTime: Int64? = nil,
        manifestBytes: Int = 0
    ) {
        self.count = count
        self.totalSize = totalSize
        self.inlineCount = inlineCount
        self.fileCount = fileCount
        self.oldestAccessTime = oldestAccessTime
        self.newestAccessTime = newestAccessTime
        self.manifestBytes = manifestBytes
    }
}

extension KVStorage {
    /// Statistics about the storage's contents. Flushes pending access times first,
    /// so the access range includes recent reads.
    ///
    /// - Complexity: O(log n): the totals row plus two index lookups.
    /// - Throws: ``StashError``: `.databaseFailed`, `.closed`.
    func stats() throws(StashError) -> DiskStorageStats {
        try flushAccessTimes()
        let totals = try totals()
        let range = try perform("reading access times") { connection throws(SQLiteError) in
            try connection.withStatement(Manifest.SQL.selectAccessRange) { statement throws(SQLiteError) -> (Int64?, Int64?) in
                guard try statement.step() == .row else { return (nil, nil) }
                return (statement.optionalInt64(at: 0), statement.optionalInt64(at: 1))
            }
        }
        var manifestBytes = 0
        for suffix in ["", "-wal"] {
            if let status = try? FileSystem.entryStatus(manifestPath + suffix) {
                manifestBytes += Int(status.size)
            }
        }
        return DiskStorageStats(
            count: totals.count,
            totalSize: totals.size,
            inlineCount: totals.count - totals.fileCount,
            fileCount: totals.fileCount,
            oldestAccessTime: range.0,
            newestAccessTime: range.1,
            manifestBytes: manifestBytes
        )
    }
}
