import CSQLite

/// One connection to a SQLite database file (`sqlite3*`), with a cache of
/// prepared statements.
///
/// - Important: NOT thread-safe. The connection is opened with
///   `SQLITE_OPEN_NOMUTEX`, so SQLite does no locking of its own either: the
///   owner (``KVStorage``, itself guarded by the disk cache's lock) must
///   serialise every call. Other connections, in this process or others, are
///   coordinated by SQLite's file locks and the busy timeout.
///
/// Settings applied on open:
/// - `sqlite3_busy_timeout`: when another connection holds a lock, SQLite
///   retries for up to `busyTimeout` before returning `SQLITE_BUSY`. Callers treat
///   a busy error as a failure to report, never as damage.
/// - extended result codes on, so errors carry e.g. `SQLITE_IOERR_SHORT_READ`.
///
/// Journal mode and the other pragmas are chosen by the owner (see ``Manifest``).
///
/// Prepared statements are cached by SQL text, prepared with
/// `SQLITE_PREPARE_PERSISTENT`, and all finalized by `close()` or `deinit`.
/// SQL given as a `StaticString` (every statement of ``Manifest/SQL``) is also
/// found by the address of its text, which is fixed for the life of the process:
/// a lookup then compares pointers in a short array (a few dozen statements at
/// most) rather than hashing the whole text, which was about a tenth of the
/// instructions of a cache read; the scan is also cheaper than hashing the
/// pointer into a dictionary (about 500 instructions less per statement).
final class SQLiteConnection {
    /// The C handle; `nil` once closed.
    private(set) var handle: OpaquePointer?
    /// The path of the database file.
    let path: String
    /// Prepared statements by SQL text.
    private var statements: [String: SQLiteStatement] = [:]
    /// The same statements, for SQL given as a `StaticString`, with its text's
    /// address; most recently prepared last.
    private var staticStatements: [(address: UnsafeRawPointer, statement: SQLiteStatement)] = []

    /// Opens the database at `path`, creating it if needed unless `create` is false.
    ///
    /// Flags: `SQLITE_OPEN_READWRITE`, `SQLITE_OPEN_CREATE` (when `create`), `SQLITE_OPEN_NOMUTEX`
    /// (no SQLite mutex: the owner serialises access with its own lock) and
    /// `SQLITE_OPEN_NOFOLLOW` (the database path itself may not be a symbolic link).
    ///
    /// Opening does not read the file: a damaged or foreign file is reported by the
    /// first statement (`SQLITE_NOTADB` or `SQLITE_CORRUPT`).
    ///
    /// - Parameters:
    ///   - path: The database file.
    ///   - busyTimeout: How long to retry when another connection holds a lock.
    ///     Defaults to 5 seconds. Clamped to 0…`Int32.max` milliseconds.
    ///   - create: Whether a missing database file is created. Defaults to `true`.
    /// - Throws: ``SQLiteError`` if the file cannot be opened (`SQLITE_CANTOPEN`, …).
    init(path: String, busyTimeout: Duration = .seconds(5), create: Bool = true) throws(SQLiteError) {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let error = SQLiteError(code: code, database: handle, sql: nil)
            sqlite3_close_v2(handle)
            throw error
        }
        self.handle = handle
        self.path = path
        sqlite3_extended_result_codes(handle, 1)
        let milliseconds = busyTimeout.nanosecondsClamped / 1_000_000
        sqlite3_busy_timeout(handle, Int32(clamping: max(0, milliseconds)))
    }

    deinit {
        close()
    }

    /// Finalizes every cached statement and closes the connection. Idempotent.
    ///
    /// Uses `sqlite3_close_v2`, so a statement still held elsewhere does not keep
    /// the close from happening: SQLite frees the connection when it is finalized.
    func close() {
        staticStatements.removeAll()
        statements.removeAll()  // each statement finalizes itself in deinit
        if let handle {
            sqlite3_close_v2(handle)
            self.handle = nil
        }
    }

    /// Whether `close()` has been called.
    var isClosed: Bool { handle == nil }

    /// The open handle, or a `SQLITE_MISUSE` error once closed.
    private func openHandle(sql: String?) throws(SQLiteError) -> OpaquePointer {
        guard let handle else {
            throw SQLiteError(resultCode: SQLITE_MISUSE, message: "the connection is closed", sql: sql)
        }
        return handle
    }

    // MARK: - Statements

    /// The cached prepared statement for `sql`, preparing and caching it on first use.
    ///
    /// If the cached statement is already in use by an enclosing
    /// ``withStatement(_:_:)``, a fresh uncached statement is returned instead.
    ///
    /// - Complexity: O(length of `sql`) for the lookup once cached.
    /// - Throws: ``SQLiteError`` if preparing fails or the connection is closed.
    func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        let handle = try openHandle(sql: sql)
        if let cached = statements[sql] {
            if !cached.isInUse { return cached }
            return try SQLiteStatement(database: handle, sql: sql, persistent: false)
        }
        let statement = try SQLiteStatement(database: handle, sql: sql, persistent: true)
        statements[sql] = statement
        return statement
    }

    /// The cached prepared statement for the constant `sql`, as
    /// ``statement(_:)-(String)`` but found by the address of the text.
    ///
    /// - Complexity: O(k) pointer comparisons once cached, k being the number of
    ///   distinct constant statements used so far (a few dozen at most).
    /// - Throws: ``SQLiteError`` if preparing fails or the connection is closed.
    func statement(_ sql: StaticString) throws(SQLiteError) -> SQLiteStatement {
        guard sql.hasPointerRepresentation else { return try statement(sql.description) }
        let address = UnsafeRawPointer(sql.utf8Start)
        if let index = staticStatements.firstIndex(where: { $0.address == address }) {
            let cached = staticStatements[index].statement
            return cached.isInUse ? try statement(sql.description) : cached
        }
        let statement = try statement(sql.description)
        if let cached = statements[sql.description], cached === statement {
            staticStatements.append((address, cached))
        }
        return statement
    }

    /// Runs `body` with the cached statement for `sql`, then resets it and clears
    /// its bindings, whether `body` succeeded or threw.
    ///
    /// Resetting at once matters: a statement left mid-result holds a read
    /// transaction open, which would keep WAL checkpoints from completing and
    /// hide other connections' commits.
    ///
    /// - Throws: ``SQLiteError`` from preparing or from `body`.
    @discardableResult
    func withStatement<Result>(
        _ sql: String,
        _ body: (SQLiteStatement) throws(SQLiteError) -> Result
    ) throws(SQLiteError) -> Result {
        try use(statement(sql), body)
    }

    /// ``withStatement(_:_:)-(String,_)`` for a constant `sql`, found in the cache
    /// by the address of its text.
    @discardableResult
    func withStatement<Result>(
        _ sql: StaticString,
        _ body: (SQLiteStatement) throws(SQLiteError) -> Result
    ) throws(SQLiteError) -> Result {
        try use(statement(sql), body)
    }

    /// Runs `body` with `statement` marked in use, then resets it and clears its
    /// bindings.
    private func use<Result>(
        _ statement: SQLiteStatement,
        _ body: (SQLiteStatement) throws(SQLiteError) -> Result
    ) throws(SQLiteError) -> Result {
        statement.isInUse = true
        defer {
            statement.reset()
            statement.clearBindings()
            statement.isInUse = false
        }
        return try body(statement)
    }

    /// The number of statements in the cache (for tests and diagnostics).
    var cachedStatementCount: Int { statements.count }

    // MARK: - Execution

    /// Runs one or more SQL statements that take no parameters and whose rows, if
    /// any, are ignored: DDL, pragmas, transaction control.
    ///
    /// - Throws: ``SQLiteError`` carrying the SQL.
    func execute(_ sql: String) throws(SQLiteError) {
        let handle = try openHandle(sql: sql)
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        if code != SQLITE_OK {
            var error = SQLiteError(code: code, database: handle, sql: sql)
            if let message {
                error.message = String(cString: message)
            }
            sqlite3_free(message)
            throw error
        }
    }

    /// Runs one parameterless statement, cached, to completion, ignoring any rows.
    ///
    /// - Throws: ``SQLiteError``.
    func run(_ sql: String) throws(SQLiteError) {
        try withStatement(sql) { statement throws(SQLiteError) in
            while try statement.step() == .row {}
        }
    }

    /// ``run(_:)-(String)`` for a constant `sql`, found in the cache by address.
    func run(_ sql: StaticString) throws(SQLiteError) {
        try withStatement(sql) { statement throws(SQLiteError) in
            while try statement.step() == .row {}
        }
    }

    /// Runs a statement returning one integer, such as `PRAGMA user_version`.
    ///
    /// - Returns: The first column of the first row, or `nil` when there is no row
    ///   or the value is `NULL`.
    /// - Throws: ``SQLiteError``.
    func scalarInt64(_ sql: String) throws(SQLiteError) -> Int64? {
        try withStatement(sql) { statement throws(SQLiteError) in
            guard try statement.step() == .row else { return nil }
            return statement.optionalInt64(at: 0)
        }
    }

    /// Runs a statement returning one text value, such as `PRAGMA journal_mode=WAL`.
    ///
    /// - Throws: ``SQLiteError``.
    func scalarText(_ sql: String) throws(SQLiteError) -> String? {
        try withStatement(sql) { statement throws(SQLiteError) in
            guard try statement.step() == .row else { return nil }
            return statement.text(at: 0)
        }
    }

    /// Runs `body` inside `BEGIN IMMEDIATE` … `COMMIT`, rolling back if `body` or
    /// the commit throws.
    ///
    /// `BEGIN IMMEDIATE` takes the write lock at once (waiting up to the busy
    /// timeout), so a transaction never fails half-way with `SQLITE_BUSY` while
    /// upgrading from reading to writing.
    ///
    /// - Parameters:
    ///   - undo: Called when `body` or the commit throws, before the rollback (so
    ///     usually still holding the write lock): undoes what `body` did outside
    ///     the database. Does nothing by default.
    ///   - body: The transaction's work.
    /// - Important: Not reentrant: `body` must not start another transaction.
    /// - Throws: ``SQLiteError`` from `BEGIN`, `body` or `COMMIT`.
    func transaction<Result>(
        undo: () -> Void = {},
        _ body: () throws(SQLiteError) -> Result
    ) throws(SQLiteError) -> Result {
        try run("BEGIN IMMEDIATE" as StaticString)
        do {
            let result = try body()
            try run("COMMIT" as StaticString)
            return result
        } catch {
            undo()
            rollback()
            throw error
        }
    }

    /// Rolls back the open transaction, if any. Errors are ignored: SQLite has
    /// already rolled back after some failures (`SQLITE_FULL`, `SQLITE_IOERR`, …).
    private func rollback() {
        guard let handle, sqlite3_get_autocommit(handle) == 0 else { return }
        sqlite3_exec(handle, "ROLLBACK", nil, nil, nil)
    }

    // MARK: - State

    /// Whether a transaction is open on this connection.
    var isInTransaction: Bool {
        guard let handle else { return false }
        return sqlite3_get_autocommit(handle) == 0
    }

    /// The rows changed by the most recent `INSERT`, `UPDATE` or `DELETE`
    /// (`sqlite3_changes64`).
    var changes: Int {
        guard let handle else { return 0 }
        return Int(sqlite3_changes64(handle))
    }

    /// SQLite's message for the most recent failure on this connection.
    var lastErrorMessage: String {
        guard let handle else { return "the connection is closed" }
        return String(cString: sqlite3_errmsg(handle))
    }

    /// `PRAGMA data_version`: a number that changes whenever ANOTHER connection
    /// (in this process or another) commits a change to the database. Cheap: no
    /// disk read when nothing changed.
    ///
    /// - Throws: ``SQLiteError``.
    func dataVersion() throws(SQLiteError) -> Int64 {
        try scalarInt64("PRAGMA data_version") ?? 0
    }

    /// The largest string or BLOB SQLite accepts on this connection, in bytes
    /// (`SQLITE_LIMIT_LENGTH`, 1,000,000,000 by default).
    var maximumLength: Int {
        guard let handle else { return 0 }
        return Int(sqlite3_limit(handle, SQLITE_LIMIT_LENGTH, -1))
    }
}
