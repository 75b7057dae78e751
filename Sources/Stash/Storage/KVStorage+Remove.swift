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
        return try removeRow(key, "removing \(Self.describe(key))", Manifest.SQL.deleteKey)
    }

    /// Removes `key`'s entry if it is still expired at `now` (another instance may
    /// have replaced it since it was read), deleting its file afterwards.
    func removeExpiredEntry(_ key: String, now: Int64) throws(StashError) {
        let removed = try removeRow(key, "removing expired \(Self.describe(key))", Manifest.SQL.deleteExpiredKey) {
            statement throws(SQLiteError) in try statement.bind(now, at: 2)
        }
        if removed { expiredOnRead += 1 }
    }

    /// Deletes `key`'s row with `sql` (a `DELETE` whose parameter 1 is the key;
    /// `bindCondition` binds the others), then the row's file, after the commit.
    /// A manifest found damaged counts as nothing removed: it was reset.
    ///
    /// - Returns: Whether a row was removed.
    private func removeRow(
        _ key: String, _ action: @autoclosure () -> String, _ sql: StaticString,
        bindCondition: (SQLiteStatement) throws(SQLiteError) -> Void = { _ throws(SQLiteError) in }
    ) throws(StashError) -> Bool {
        accessLog.forget(key)
        let result: (removed: Bool, filename: String?)
        do {
            result = try perform(action()) { connection throws(SQLiteError) in
                try deleteReturningFilename(connection, sql) { statement throws(SQLiteError) in
                    try statement.bind(key, at: 1)
                    try bindCondition(statement)
                }
            }
        } catch where error.code == .corrupted {
            return false
        }
        if let filename = result.filename { removeDataFile(filename) }
        return result.removed
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
        accessLog.forget(key)
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
