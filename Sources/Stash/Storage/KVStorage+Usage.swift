extension KVStorage {
    /// What the storage holds on disk. Flushes pending access times first,
    /// so the access range includes recent reads.
    ///
    /// - Complexity: O(log n): the totals row plus two index lookups.
    /// - Throws: ``StashError``: `.databaseFailed`, `.closed`.
    func usage() throws(StashError) -> DiskUsage {
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
        return DiskUsage(
            totalSize: totals.size,
            inlineCount: totals.count - totals.fileCount,
            fileCount: totals.fileCount,
            oldestAccessTime: range.0,
            newestAccessTime: range.1,
            manifestBytes: manifestBytes
        )
    }
}
