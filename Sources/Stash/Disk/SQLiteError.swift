import CSQLite

/// An error reported by SQLite, with its result codes, its message and the SQL
/// that failed.
///
/// Stash never throws a `SQLiteError` directly: it appears as the
/// ``StashError/cause`` of a ``StashError`` whose code is
/// ``StashError/Code/databaseFailed`` (or ``StashError/Code/corrupted`` when the
/// cache's manifest turned out to be damaged and was set aside).
///
/// ```swift
/// catch let error as StashError {
///     if let sqlite = error.cause as? SQLiteError, sqlite.isBusy {
///         // another process held the database for longer than the busy timeout
///     }
/// }
/// ```
///
/// A value type: `Sendable` and safe to share between threads.
public struct SQLiteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The primary result code, such as `SQLITE_BUSY` (5), `SQLITE_CORRUPT` (11) or
    /// `SQLITE_NOTADB` (26): the low 8 bits of ``extendedResultCode``.
    public var resultCode: Int32
    /// The extended result code, such as `SQLITE_IOERR_SHORT_READ` (522), which
    /// refines ``resultCode``. Equal to ``resultCode`` when SQLite gave no refinement.
    public var extendedResultCode: Int32
    /// SQLite's English description of the failure (`sqlite3_errmsg`).
    public var message: String
    /// The SQL text that failed, or `nil` when the failure was not tied to a
    /// statement (opening or closing the database, for example). Never contains
    /// bound values such as keys or data.
    public var sql: String?

    /// Creates an error from its parts.
    ///
    /// - Parameters:
    ///   - resultCode: The primary result code.
    ///   - extendedResultCode: The extended result code. Defaults to `resultCode`.
    ///   - message: SQLite's description of the failure.
    ///   - sql: The SQL that failed, if any. Defaults to `nil`.
    public init(resultCode: Int32, extendedResultCode: Int32? = nil, message: String, sql: String? = nil) {
        self.resultCode = resultCode
        self.extendedResultCode = extendedResultCode ?? resultCode
        self.message = message
        self.sql = sql
    }

    /// Creates an error for the (possibly extended) result code `code`, taking the
    /// message from `database` when its last error is that code, otherwise from
    /// SQLite's generic text for the code.
    init(code: Int32, database: OpaquePointer?, sql: String?) {
        var message: String?
        if let database, sqlite3_extended_errcode(database) == code, let text = sqlite3_errmsg(database) {
            message = String(cString: text)
        }
        if message == nil, let text = sqlite3_errstr(code) {
            message = String(cString: text)
        }
        self.init(resultCode: code & 0xFF, extendedResultCode: code, message: message ?? "unknown error", sql: sql)
    }

    /// Whether the database file is damaged or is not a database at all
    /// (`SQLITE_CORRUPT`, `SQLITE_NOTADB`). Only these errors make Stash set the
    /// manifest aside; busy, locked, full or I/O errors never do.
    ///
    /// Public so that callers need not compare ``resultCode`` with numbers from
    /// SQLite's header, which Stash does not export.
    ///
    /// - Complexity: O(1).
    public var isCorruption: Bool {
        resultCode == SQLITE_CORRUPT || resultCode == SQLITE_NOTADB
    }

    /// Whether another connection held a lock for longer than the busy timeout
    /// (`SQLITE_BUSY`, `SQLITE_LOCKED`). Never a reason to delete anything; the
    /// operation may succeed if retried.
    ///
    /// - Complexity: O(1).
    public var isBusy: Bool {
        resultCode == SQLITE_BUSY || resultCode == SQLITE_LOCKED
    }

    /// A one-line summary: the codes, SQLite's message and the SQL, for logs.
    ///
    /// - Complexity: O(n) in the length of the message and SQL.
    public var description: String {
        var text = "SQLite error \(resultCode)"
        if extendedResultCode != resultCode {
            text += " (extended \(extendedResultCode))"
        }
        text += ": \(message)"
        if let sql {
            text += " [\(sql)]"
        }
        return text
    }
}
