import CSQLite
import Foundation
import Testing
@testable import Stash

@Suite(.timeLimit(.minutes(5))) struct SQLiteConnectionTests {
    let directory: TemporaryDirectory
    let path: String

    init() throws {
        directory = try TemporaryDirectory()
        path = directory.appending("test.sqlite")
    }

    @Test func statementCacheReusesPreparedStatements() throws {
        let connection = try SQLiteConnection(path: path)
        try connection.execute("CREATE TABLE t (x INTEGER)")
        let first = try connection.statement("SELECT count(*) FROM t")
        let second = try connection.statement("SELECT count(*) FROM t")
        #expect(first === second)
        #expect(connection.cachedStatementCount == 1)
        for value in 0..<10 {
            try connection.withStatement("INSERT INTO t (x) VALUES (?1)") { statement throws(SQLiteError) in
                try statement.bind(Int64(value), at: 1)
                try statement.step()
            }
        }
        #expect(connection.cachedStatementCount == 2)
        #expect(try connection.scalarInt64("SELECT count(*) FROM t") == 10)
    }

    @Test func nestedUseOfOneStatementGetsASeparateStatement() throws {
        let connection = try SQLiteConnection(path: path)
        let sql = "SELECT 1"
        let inner = try connection.withStatement(sql) { outer throws(SQLiteError) in
            let nested = try connection.statement(sql)
            return nested !== outer
        }
        #expect(inner)
        #expect(connection.cachedStatementCount == 1)
    }

    @Test func errorsCarryResultCodesMessageAndSQL() throws {
        let connection = try SQLiteConnection(path: path)
        do {
            _ = try connection.statement("SELEKT nonsense")
            Issue.record("a syntax error was accepted")
        } catch {
            #expect(error.resultCode == SQLITE_ERROR)
            #expect(error.sql == "SELEKT nonsense")
            #expect(error.message.contains("syntax error"))
        }

        try connection.execute("CREATE TABLE u (k TEXT PRIMARY KEY)")
        try connection.execute("INSERT INTO u VALUES ('a')")
        do {
            try connection.execute("INSERT INTO u VALUES ('a')")
            Issue.record("a duplicate key was accepted")
        } catch {
            #expect(error.resultCode == SQLITE_CONSTRAINT)
            #expect(error.extendedResultCode == 1555)  // SQLITE_CONSTRAINT_PRIMARYKEY
            #expect(error.description.contains("constraint"))
        }
    }

    @Test func transactionRollsBackWhenTheBodyThrows() throws {
        let connection = try SQLiteConnection(path: path)
        try connection.execute("CREATE TABLE t (x INTEGER)")
        do {
            try connection.transaction { () throws(SQLiteError) in
                try connection.execute("INSERT INTO t VALUES (1)")
                throw SQLiteError(resultCode: SQLITE_ABORT, message: "test")
            }
        } catch {
            #expect(error.resultCode == SQLITE_ABORT)
        }
        #expect(!connection.isInTransaction)
        #expect(try connection.scalarInt64("SELECT count(*) FROM t") == 0)

        try connection.transaction { () throws(SQLiteError) in
            try connection.execute("INSERT INTO t VALUES (1)")
        }
        #expect(try connection.scalarInt64("SELECT count(*) FROM t") == 1)
        #expect(connection.changes == 1)
    }

    @Test func textWithNULAndBlobsRoundTrip() throws {
        let connection = try SQLiteConnection(path: path)
        try connection.execute("CREATE TABLE t (k TEXT PRIMARY KEY, b BLOB)")
        let keys = ["a\u{0}b", "a\u{0}c", "", "é\n/..", "a"]
        for (index, key) in keys.enumerated() {
            try connection.withStatement("INSERT INTO t VALUES (?1, ?2)") { statement throws(SQLiteError) in
                try statement.bind(key, at: 1)
                try statement.bind(index == 2 ? Data() : testBytes(index * 100), at: 2)
                try statement.step()
            }
        }
        #expect(try connection.scalarInt64("SELECT count(*) FROM t") == Int64(keys.count))
        for (index, key) in keys.enumerated() {
            let (text, blob) = try connection.withStatement("SELECT k, b FROM t WHERE k = ?1") { statement throws(SQLiteError) in
                try statement.bind(key, at: 1)
                #expect(try statement.step() == .row)
                return (statement.text(at: 0), statement.blob(at: 1))
            }
            #expect(text == key)
            #expect(blob == (index == 2 ? Data() : testBytes(index * 100)))
        }
        // An empty blob is a zero-length BLOB, not NULL.
        #expect(try connection.scalarInt64("SELECT count(*) FROM t WHERE b IS NULL") == 0)
    }

    @Test func staticBlobBindingDoesNotOutliveItsBuffer() throws {
        let connection = try SQLiteConnection(path: path)
        try connection.execute("CREATE TABLE t (b BLOB)")
        let payload = testBytes(100_000)
        try connection.withStatement("INSERT INTO t VALUES (?1)") { statement throws(SQLiteError) in
            try withBytes(of: payload) { bytes throws(SQLiteError) in
                try statement.bindStatic(bytes!, at: 1)
                try statement.step()
            }
        }
        // withStatement cleared the binding: running the cached statement again binds NULL.
        try connection.withStatement("INSERT INTO t VALUES (?1)") { statement throws(SQLiteError) in
            try statement.step()
        }
        #expect(try connection.scalarInt64("SELECT count(*) FROM t WHERE b IS NULL") == 1)
        #expect(try connection.scalarInt64("SELECT length(b) FROM t WHERE b IS NOT NULL") == 100_000)
    }

    @Test func busyDatabaseThrowsBusyAfterTheTimeout() throws {
        let holder = try SQLiteConnection(path: path)
        _ = try holder.scalarText("PRAGMA journal_mode = WAL")
        try holder.execute("CREATE TABLE t (x INTEGER)")
        let waiter = try SQLiteConnection(path: path, busyTimeout: .milliseconds(20))
        try holder.execute("BEGIN IMMEDIATE")
        do {
            try waiter.execute("BEGIN IMMEDIATE")
            Issue.record("took a write lock that another connection holds")
        } catch {
            #expect(error.resultCode == SQLITE_BUSY)
            #expect(error.isBusy)
            #expect(!error.isCorruption)
        }
        try holder.execute("COMMIT")
        try waiter.execute("BEGIN IMMEDIATE; INSERT INTO t VALUES (1); COMMIT")
        #expect(try holder.scalarInt64("SELECT count(*) FROM t") == 1)
    }

    @Test func dataVersionChangesWhenAnotherConnectionCommits() throws {
        let first = try SQLiteConnection(path: path)
        let second = try SQLiteConnection(path: path)
        try first.execute("CREATE TABLE t (x INTEGER)")
        let before = try first.dataVersion()
        try first.execute("INSERT INTO t VALUES (1)")
        #expect(try first.dataVersion() == before)  // its own commits do not count
        try second.execute("INSERT INTO t VALUES (2)")
        #expect(try first.dataVersion() != before)
    }

    @Test func notADatabaseIsReportedAsCorruption() throws {
        try writeFile(path, Data(repeating: 0x41, count: 4096))
        let connection = try SQLiteConnection(path: path)
        do {
            _ = try connection.scalarInt64("PRAGMA user_version")
            Issue.record("garbage was read as a database")
        } catch {
            #expect(error.resultCode == SQLITE_NOTADB)
            #expect(error.isCorruption)
        }
    }

    @Test func closeFinalizesStatementsAndLaterUseThrows() throws {
        let connection = try SQLiteConnection(path: path)
        _ = try connection.statement("SELECT 1")
        connection.close()
        #expect(connection.isClosed)
        #expect(connection.cachedStatementCount == 0)
        do {
            _ = try connection.statement("SELECT 1")
            Issue.record("a closed connection prepared a statement")
        } catch {
            #expect(error.resultCode == SQLITE_MISUSE)
        }
        connection.close()  // idempotent
    }

    @Test func openFailureCarriesTheResultCode() {
        do {
            _ = try SQLiteConnection(path: directory.appending("missing/dir/x.sqlite"))
            Issue.record("opened a database in a missing directory")
        } catch {
            #expect(error.resultCode == SQLITE_CANTOPEN)
        }
    }
}
