#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

import CSQLite
import Logging

extension KVStorage {
    /// Removes the entry for `key`, deleting its file after the row is gone.
    ///
    /// - Returns: `true` if there was an entry (expired or not), `false` otherwise.
    /// - Complexity: O(log n).
    /// - Throws: ``StashError``: `.invalidKey`, `.databaseFailed`, `.closed`.
    @discardableResult
    func removeValue(forKey key: String) throws(StashError) -> Bool {
        try Self.validate(key)
        _ = try requireWritableConnection()
        pendingAccessTimes[key] = nil
        let result: (removed: Bool, filename: String?)
        do {
            result = try perform("removing \(Self.describe(key))") { connection throws(SQLiteError) in
                try deleteReturningFilename(connection, Manifest.SQL.deleteKey) { statement throws(SQLiteError) in
                    try statement.bind(key, at: 1)
                }
            }
        } catch where error.code == .corrupted {
            return false
        }
        if let filename = result.filename { removeDataFile(filename) }
        return result.removed
    }

    /// Removes `key`'s entry if it is still expired at `now` (another instance may
    /// have replaced it since it was read), deleting its file afterwards.
    func removeExpiredEntry(_ key: String, now: Int64) throws(StashError) {
        pendingAccessTimes[key] = nil
        let removed: (removed: Bool, filename: String?)
        do {
            removed = try perform("removing expired \(Self.describe(key))") { connection throws(SQLiteError) in
                try deleteReturningFilename(connection, Manifest.SQL.deleteExpiredKey) { statement throws(SQLiteError) in
                    try statement.bind(key, at: 1)
                    try statement.bind(now, at: 2)
                }
            }
        } catch where error.code == .corrupted {
            return
        }
        if removed.removed { expiredOnRead += 1 }
        if let filename = removed.filename { removeDataFile(filename) }
    }

    /// Removes `key`'s entry if it still refers to `filename`.
    ///
    /// - Returns: Whether the row was removed (`false`: the entry changed or vanished).
    func removeDamagedEntry(_ key: String, filename: String) throws(StashError) -> Bool {
        try removeDamagedRow(key, Manifest.SQL.deleteKeyWithFile) { statement throws(SQLiteError) in
            try statement.bind(filename, at: 2)
        }
    }

    /// Removes `key`'s inline entry if it is still inline with the damaged `size`.
    ///
    /// - Returns: Whether the row was removed (`false`: the entry changed or vanished).
    func removeDamagedInlineEntry(_ key: String, size: Int) throws(StashError) -> Bool {
        try removeDamagedRow(key, Manifest.SQL.deleteInlineKey) { statement throws(SQLiteError) in
            try statement.bind(Int64(size), at: 2)
        }
    }

    /// Runs `sql`, a `DELETE` of `key`'s row (parameter 1) under a condition that
    /// `bindCondition` binds, so that a row another instance replaced meanwhile is
    /// kept. A manifest found damaged counts as removed: it was reset.
    private func removeDamagedRow(
        _ key: String, _ sql: StaticString, bindCondition: (SQLiteStatement) throws(SQLiteError) -> Void
    ) throws(StashError) -> Bool {
        pendingAccessTimes[key] = nil
        do {
            return try perform("removing damaged \(Self.describe(key))") { connection throws(SQLiteError) in
                try deleteReturningFilename(connection, sql) { statement throws(SQLiteError) in
                    try statement.bind(key, at: 1)
                    try bindCondition(statement)
                }.removed
            }
        } catch where error.code == .corrupted {
            return true
        }
    }

    /// In one transaction, runs `sql`, a `DELETE` of at most one row returning
    /// (filename, size), after `bind` has bound its parameters, and takes the
    /// removed row off the totals.
    ///
    /// - Returns: Whether a row was removed, and its file, if it had one.
    private func deleteReturningFilename(
        _ connection: SQLiteConnection, _ sql: StaticString, bind: (SQLiteStatement) throws(SQLiteError) -> Void
    ) throws(SQLiteError) -> (removed: Bool, filename: String?) {
        try connection.transaction { () throws(SQLiteError) in
            var totals = Manifest.TotalsChange()
            let result = try connection.withStatement(sql) { statement throws(SQLiteError) -> (removed: Bool, filename: String?) in
                try bind(statement)
                guard try statement.step() == .row else { return (false, nil) }
                totals.remove(returnedBy: statement)
                let filename = statement.text(at: 0)
                while try statement.step() == .row {}
                return (true, filename)
            }
            try applyTotals(connection, totals)
            return result
        }
    }
}
