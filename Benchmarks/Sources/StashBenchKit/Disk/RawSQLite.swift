import CSQLiteBench
import Foundation

/// A SQLite connection driven through the C API, for the raw baselines: opened
/// with WAL and synchronous=NORMAL (as DiskCache opens its manifest), statements
/// prepared once and kept.
final class RawSQLite {
    private var db: OpaquePointer?

    init(path: String) throws {
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK else {
            defer { sqlite3_close_v2(db) }
            throw BenchError("sqlite3_open_v2(\(path)): \(String(cString: sqlite3_errmsg(db)))")
        }
        try execute("PRAGMA journal_mode=WAL")
        try execute("PRAGMA synchronous=NORMAL")
    }

    func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        if sqlite3_exec(db, sql, nil, nil, &message) != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? "unknown error"
            sqlite3_free(message)
            throw BenchError("SQLite '\(sql)': \(text)")
        }
    }

    func prepare(_ sql: String) throws -> OpaquePointer? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK else {
            throw BenchError("SQLite prepare '\(sql)': \(String(cString: sqlite3_errmsg(db)))")
        }
        return statement
    }

    /// The connection's last error, for `what` ("insert").
    func error(_ what: String) -> BenchError {
        BenchError("SQLite \(what): \(String(cString: sqlite3_errmsg(db)))")
    }

    func close(finalizing statements: [OpaquePointer?]) {
        for statement in statements { sqlite3_finalize(statement) }
        sqlite3_close_v2(db)
        db = nil
    }

    /// Binds UTF-8 bytes as text without a copy (the caller keeps them alive
    /// until the statement is reset).
    static func bind(_ text: UnsafeBufferPointer<UInt8>, to statement: OpaquePointer?, at index: Int32) {
        sqlite3_bind_text(statement, index, UnsafeRawPointer(text.baseAddress!).assumingMemoryBound(to: CChar.self),
                          Int32(text.count), nil)
    }

    /// Runs a writing `statement` once with `key` bound to ?1 and whatever
    /// `bindRest` binds (without copies: it runs while the key is bound), then
    /// resets it and clears its bindings.
    func write(_ statement: OpaquePointer?, key: [UInt8], _ bindRest: (OpaquePointer?) -> Void = { _ in }) throws {
        let result = key.withUnsafeBufferPointer { key in
            Self.bind(key, to: statement, at: 1)
            bindRest(statement)
            defer { sqlite3_reset(statement); sqlite3_clear_bindings(statement) }
            return sqlite3_step(statement)
        }
        if result != SQLITE_DONE { throw error("write") }
    }

    /// Runs a query `statement` with `key` bound to ?1: `row` on its first row,
    /// `nil` when there is none.
    func read<Result>(_ statement: OpaquePointer?, key: [UInt8], _ row: (OpaquePointer?) throws -> Result) throws -> Result? {
        try key.withUnsafeBufferPointer { key in
            Self.bind(key, to: statement, at: 1)
            defer { sqlite3_reset(statement); sqlite3_clear_bindings(statement) }
            switch sqlite3_step(statement) {
            case SQLITE_ROW: return try row(statement)
            case SQLITE_DONE: return nil
            default: throw error("read")
            }
        }
    }

    /// Copies a blob column into `buffer` (as much as fits); its size.
    static func copyBlob(_ statement: OpaquePointer?, column: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let size = min(Int(sqlite3_column_bytes(statement, column)), buffer.count)
        if let blob = sqlite3_column_blob(statement, column), size > 0 {
            buffer.baseAddress!.copyMemory(from: blob, byteCount: size)
        }
        return size
    }
}
