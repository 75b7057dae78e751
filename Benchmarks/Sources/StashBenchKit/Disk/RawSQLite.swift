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

    /// Copies a blob column into `buffer` (as much as fits); its size.
    static func copyBlob(_ statement: OpaquePointer?, column: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let size = min(Int(sqlite3_column_bytes(statement, column)), buffer.count)
        if let blob = sqlite3_column_blob(statement, column), size > 0 {
            buffer.baseAddress!.copyMemory(from: blob, byteCount: size)
        }
        return size
    }
}
