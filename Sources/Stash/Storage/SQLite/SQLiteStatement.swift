import CSQLite

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One prepared SQLite statement (`sqlite3_stmt`).
///
/// The C statement lives exactly as long as this object: it is prepared by the
/// throwing initialiser and finalized in `deinit`, so it can neither leak nor be
/// used after finalization.
///
/// Use: bind parameters (1-based indices), call ``step()`` until it returns
/// ``StepResult/done``, reading columns (0-based indices) while it returns
/// ``StepResult/row``, then ``reset()`` and ``clearBindings()``.
/// ``SQLiteConnection/withStatement(_:_:)`` does the last two for you.
///
/// - Important: Not thread-safe, like the ``SQLiteConnection`` it belongs to:
///   the owner of the connection serialises every use.
final class SQLiteStatement {
    /// What one call to ``step()`` produced.
    enum StepResult {
        /// A result row is available for the column readers.
        case row
        /// The statement has run to completion.
        case done
    }

    /// The C statement handle, valid for the lifetime of this object.
    let handle: OpaquePointer
    /// The SQL text the statement was prepared from, carried into errors.
    let sql: String
    /// Set while a caller of ``SQLiteConnection/withStatement(_:_:)`` is using this
    /// cached statement, so that a nested use of the same SQL gets its own statement.
    var isInUse = false

    /// Prepares `sql` on `database`.
    ///
    /// - Parameters:
    ///   - database: An open connection handle.
    ///   - sql: Exactly one SQL statement.
    ///   - persistent: Whether to pass `SQLITE_PREPARE_PERSISTENT`, telling SQLite
    ///     the statement will be kept and reused (it then avoids lookaside memory).
    /// - Throws: ``SQLiteError`` if the SQL does not compile, names a missing table,
    ///   or the database is damaged (`SQLITE_NOTADB`, `SQLITE_CORRUPT` surface here
    ///   because preparing reads the schema).
    init(database: OpaquePointer, sql: String, persistent: Bool) throws(SQLiteError) {
        var statement: OpaquePointer?
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        let code = sqlite3_prepare_v3(database, sql, -1, flags, &statement, nil)
        guard code == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            if code == SQLITE_OK {
                // Empty or comment-only SQL compiles to no statement at all.
                throw SQLiteError(resultCode: SQLITE_MISUSE, message: "the SQL contains no statement", sql: sql)
            }
            throw SQLiteError(code: code, database: database, sql: sql)
        }
        self.handle = statement
        self.sql = sql
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// The error for result code `code`, with this statement's SQL.
    private func error(_ code: Int32) -> SQLiteError {
        SQLiteError(code: code, database: sqlite3_db_handle(handle), sql: sql)
    }

    /// Throws unless `code` is `SQLITE_OK`.
    @inline(__always)
    private func check(_ code: Int32) throws(SQLiteError) {
        if code != SQLITE_OK { throw error(code) }
    }

    // MARK: - Binding

    /// Binds a 64-bit integer to the parameter at `index` (1-based).
    ///
    /// - Throws: ``SQLiteError`` (`SQLITE_RANGE`) if there is no such parameter.
    func bind(_ value: Int64, at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_int64(handle, index, value))
    }

    /// Binds a 64-bit integer, or SQL `NULL` when `value` is `nil`.
    ///
    /// - Throws: ``SQLiteError`` (`SQLITE_RANGE`) if there is no such parameter.
    func bind(_ value: Int64?, at index: Int32) throws(SQLiteError) {
        if let value {
            try bind(value, at: index)
        } else {
            try bindNull(at: index)
        }
    }

    /// Binds a double to the parameter at `index` (1-based).
    ///
    /// - Throws: ``SQLiteError`` (`SQLITE_RANGE`) if there is no such parameter.
    func bind(_ value: Double, at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_double(handle, index, value))
    }

    /// Binds SQL `NULL` to the parameter at `index` (1-based).
    ///
    /// - Throws: ``SQLiteError`` (`SQLITE_RANGE`) if there is no such parameter.
    func bindNull(at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_null(handle, index))
    }

    /// Binds `text` as UTF-8 TEXT with its explicit byte length, so that NUL
    /// characters inside it survive. SQLite copies the bytes.
    ///
    /// - Complexity: O(n) in the UTF-8 length (one copy).
    /// - Throws: ``SQLiteError``: `SQLITE_TOOBIG` beyond SQLite's length limit,
    ///   `SQLITE_RANGE` if there is no such parameter.
    func bind(_ text: String, at index: Int32) throws(SQLiteError) {
        var text = text
        let code = text.withUTF8 { utf8 -> Int32 in
            guard let base = utf8.baseAddress else {
                // A nil pointer would bind NULL: bind a real empty string instead.
                return sqlite3_bind_text64(handle, index, "", 0, Self.transient, UInt8(SQLITE_UTF8))
            }
            return base.withMemoryRebound(to: CChar.self, capacity: utf8.count) { chars in
                sqlite3_bind_text64(handle, index, chars, UInt64(utf8.count), Self.transient, UInt8(SQLITE_UTF8))
            }
        }
        try check(code)
    }

    /// Binds `text`, or SQL `NULL` when it is `nil`.
    ///
    /// - Throws: as ``bind(_:at:)-(String,_)``.
    func bind(_ text: String?, at index: Int32) throws(SQLiteError) {
        if let text {
            try bind(text, at: index)
        } else {
            try bindNull(at: index)
        }
    }

    /// Binds `bytes` as a BLOB WITHOUT copying them (`SQLITE_STATIC`).
    ///
    /// An empty buffer binds a zero-length BLOB, never `NULL`.
    ///
    /// - Important: The memory must stay valid and unchanged until the statement
    ///   has been stepped and its bindings cleared or replaced: call this inside the
    ///   `withUnsafeBytes` closure that produced the buffer, and step inside it too.
    /// - Complexity: O(1).
    /// - Throws: ``SQLiteError``: `SQLITE_TOOBIG` beyond SQLite's length limit,
    ///   `SQLITE_RANGE` if there is no such parameter.
    func bindStatic(_ bytes: UnsafeRawBufferPointer, at index: Int32) throws(SQLiteError) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else {
            try check(sqlite3_bind_zeroblob(handle, index, 0))
            return
        }
        try check(sqlite3_bind_blob64(handle, index, base, UInt64(bytes.count), nil))
    }

    /// Binds `data` as a BLOB, copying it (`SQLITE_TRANSIENT`), or `NULL` when `data`
    /// is `nil`. An empty `Data` binds a zero-length BLOB.
    ///
    /// - Complexity: O(n): one copy. Use ``bindStatic(_:at:)`` on hot paths.
    /// - Throws: ``SQLiteError``: `SQLITE_TOOBIG`, `SQLITE_RANGE`.
    func bind(_ data: Data?, at index: Int32) throws(SQLiteError) {
        guard let data else {
            try bindNull(at: index)
            return
        }
        let code = data.withUnsafeBytes { bytes -> Int32 in
            guard let base = bytes.baseAddress, !bytes.isEmpty else {
                return sqlite3_bind_zeroblob(handle, index, 0)
            }
            return sqlite3_bind_blob64(handle, index, base, UInt64(bytes.count), Self.transient)
        }
        try check(code)
    }

    /// SQLite's `SQLITE_TRANSIENT` destructor (the C macro `(sqlite3_destructor_type)-1`,
    /// which Swift cannot import): tells SQLite to copy bound bytes at once.
    private static var transient: sqlite3_destructor_type {
        unsafeBitCast(-1 as Int, to: sqlite3_destructor_type.self)
    }

    // MARK: - Stepping

    /// Runs the statement to its next row.
    ///
    /// `SQLITE_BUSY` is retried by the connection's busy handler for up to its busy
    /// timeout before this throws.
    ///
    /// - Returns: ``StepResult/row`` when a row is ready, ``StepResult/done`` at the end.
    /// - Throws: ``SQLiteError`` with the statement's SQL (busy, constraint,
    ///   corruption, full disk, I/O error, …).
    @discardableResult
    func step() throws(SQLiteError) -> StepResult {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return .row
        case SQLITE_DONE: return .done
        default: throw error(code)
        }
    }

    /// Rewinds the statement so it can run again; bindings are kept.
    ///
    /// The error of a failed step is not reported again here: ``step()`` threw it.
    func reset() {
        sqlite3_reset(handle)
    }

    /// Sets every parameter back to `NULL`, dropping references to bound memory.
    func clearBindings() {
        sqlite3_clear_bindings(handle)
    }

    // MARK: - Columns (0-based)

    /// Whether the column at `index` of the current row is SQL `NULL`.
    func isNull(at index: Int32) -> Bool {
        sqlite3_column_type(handle, index) == SQLITE_NULL
    }

    /// The column at `index` as an integer (`NULL` reads as 0).
    func int64(at index: Int32) -> Int64 {
        sqlite3_column_int64(handle, index)
    }

    /// The column at `index` as an integer, or `nil` when it is `NULL`.
    func optionalInt64(at index: Int32) -> Int64? {
        isNull(at: index) ? nil : sqlite3_column_int64(handle, index)
    }

    /// The column at `index` as a double (`NULL` reads as 0).
    func double(at index: Int32) -> Double {
        sqlite3_column_double(handle, index)
    }

    /// The column at `index` as text, using its full byte length (NUL characters
    /// survive), or `nil` when it is `NULL`.
    ///
    /// - Complexity: O(n) in the text's length (one copy into a `String`).
    func text(at index: Int32) -> String? {
        guard !isNull(at: index) else { return nil }
        // Fetch the pointer before the length, as SQLite documents.
        guard let pointer = sqlite3_column_text(handle, index) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    /// The column at `index` as bytes, copied into a `Data`, or `nil` when it is `NULL`.
    ///
    /// - Complexity: O(n) in the blob's length (one copy).
    func blob(at index: Int32) -> Data? {
        guard !isNull(at: index) else { return nil }
        let pointer = sqlite3_column_blob(handle, index)
        let count = Int(sqlite3_column_bytes(handle, index))
        guard let pointer, count > 0 else { return Data() }
        return Data(bytes: pointer, count: count)
    }

    /// The length in bytes of the column at `index` (0 for `NULL`).
    func byteCount(at index: Int32) -> Int {
        Int(sqlite3_column_bytes(handle, index))
    }
}
