// Last-access times: reads record them in memory, a flush writes them in one transaction.
//
// A read that updated its row would turn every cache hit into a write transaction
// (a WAL append, and the write lock shared with other processes). Instead a read
// notes the time in `accessLog` (AccessLog.swift), and flushAccessTimes() writes them all in
// one transaction. The owner calls it periodically; trims and close() call it first
// so that LRU order is exact; and a read flushes by itself once
// `accessFlushThreshold` times are pending, which bounds the memory used.
//
// Across instances, LRU order is as fresh as the other instances' last flush. The
// update only moves a time forwards (`last_access_time < ?`), so a late flush never
// makes an entry look older than another instance recorded.

extension KVStorage {
    /// Records that `key` was read at `time`, flushing when too many are pending.
    func recordAccess(_ key: String, at time: Int64) {
        // The count the log returns spares a second trip through its lock per read.
        if accessLog.record(key, at: time) >= options.accessFlushThreshold {
            flushAccessTimesIfDue()
        }
    }

    /// Flushes the pending access times once ``KVStorageOptions/accessFlushThreshold``
    /// are pending. A failed flush is logged and retried later; past eight times the
    /// threshold the pending times are dropped (LRU order degrades, nothing else).
    func flushAccessTimesIfDue() {
        let pending = accessLog.count
        guard pending >= options.accessFlushThreshold else { return }
        do {
            try flushAccessTimes()
        } catch {
            logger.warning("could not save access times", metadata: ["error": "\(error)", "pending": "\(pending)"])
            if accessLog.count >= options.accessFlushThreshold * 8 {
                logger.warning("dropping unsaved access times", metadata: ["count": "\(accessLog.count)"])
                accessLog.removeAll()
            }
        }
    }

    /// Writes the pending last-access times to the manifest in one transaction.
    ///
    /// - Complexity: O(p log n) for p pending times and n entries.
    /// - Throws: ``StashError``: `.databaseFailed` (the times stay pending),
    ///   `.closed`. A damaged manifest is reset and the times dropped.
    func flushAccessTimes() throws(StashError) {
        guard accessLog.count > 0 else { return }
        _ = try requireWritableConnection()
        let pending = accessLog.drain()
        guard !pending.isEmpty else { return }
        do {
            try perform("saving \(pending.count) access times") { connection throws(SQLiteError) in
                try connection.transaction { () throws(SQLiteError) in
                    for (key, time) in pending {
                        try connection.withStatement(Manifest.SQL.updateAccessTime) { statement throws(SQLiteError) in
                            try statement.bind(key, at: 1)
                            try statement.bind(time, at: 2)
                            try statement.step()
                        }
                    }
                }
            }
        } catch where error.code == .corrupted {
            return  // the recovery dropped the pending times along with the entries
        } catch {
            accessLog.restore(pending)
            throw error
        }
    }

    /// The number of reads whose access times are not yet written.
    var pendingAccessCount: Int { accessLog.count }
}
