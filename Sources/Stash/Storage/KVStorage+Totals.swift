#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

import CSQLite
import Logging

extension KVStorage {
    /// The number of entries, expired ones included until they are removed.
    ///
    /// - Complexity: O(1): a counter every write keeps in the manifest, cached
    ///   in memory while `PRAGMA data_version` shows no other connection committed.
    /// - Throws: ``StashError``: `.databaseFailed`, `.closed`.
    func count() throws(StashError) -> Int {
        try totals().count
    }

    /// The sum of the entries' value sizes in bytes (keys and extended data are
    /// not counted).
    ///
    /// - Complexity: O(1), as `count()`.
    /// - Throws: ``StashError``: `.databaseFailed`, `.closed`.
    func totalSize() throws(StashError) -> Int {
        try totals().size
    }

    // Every write this instance makes to `manifest_totals` goes through the next
    // three functions, which also forget ``cachedTotals``: so its own writes never
    // leave a stale count in memory (other connections' commits show in
    // `PRAGMA data_version`). Each runs within the caller's transaction.

    /// Applies `change` to `manifest_totals`. An empty change writes nothing.
    func applyTotals(_ connection: SQLiteConnection, _ change: Manifest.TotalsChange) throws(SQLiteError) {
        guard change != Manifest.TotalsChange() else { return }
        cachedTotals = nil
        try Manifest.adjustTotals(connection, by: change)
    }

    /// Sets `manifest_totals` to zero, once every row is deleted.
    func setTotalsToZero(_ connection: SQLiteConnection) throws(SQLiteError) {
        cachedTotals = nil
        try Manifest.setTotalsToZero(connection)
    }

    /// Recounts `manifest_totals` from the rows; whether the stored totals were wrong.
    func recountTotals(_ connection: SQLiteConnection) throws(SQLiteError) -> Bool {
        cachedTotals = nil
        return try Manifest.recountTotals(connection).corrected
    }

    /// The totals row, from memory when no connection has changed it since.
    ///
    /// Exact across instances and processes: this instance drops its cache after its
    /// own writes, and `PRAGMA data_version` changes whenever another connection
    /// commits.
    func totals() throws(StashError) -> Totals {
        do {
            return try perform("reading the totals") { connection throws(SQLiteError) in
                let version = try connection.dataVersion()
                if let cachedTotals, version == cachedTotalsVersion {
                    return cachedTotals
                }
                let totals = try readTotals(connection)
                cachedTotals = totals
                cachedTotalsVersion = version
                return totals
            }
        } catch where error.code == .corrupted {
            return Totals(count: 0, size: 0, fileCount: 0)
        }
    }

    /// Reads `manifest_totals` (within the caller's transaction, if any).
    func readTotals(_ connection: SQLiteConnection) throws(SQLiteError) -> Totals {
        try connection.withStatement(Manifest.SQL.selectTotals) { statement throws(SQLiteError) in
            guard try statement.step() == .row else { return Totals(count: 0, size: 0, fileCount: 0) }
            return Totals(
                count: Int(statement.int64(at: 0)),
                size: Int(statement.int64(at: 1)),
                fileCount: Int(statement.int64(at: 2))
            )
        }
    }
}
