#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

import CSQLite
import Logging

extension KVStorage {
    /// The open connection, reopening the manifest if a recovery left none.
    func requireConnection() throws(StashError) -> SQLiteConnection {
        if isClosed {
            throw StashError(.closed, "the disk storage at \(directory) is closed")
        }
        if let connection { return connection }
        try openManifest()
        guard let connection else {
            throw StashError(.databaseFailed, "the manifest at \(manifestPath) could not be reopened")
        }
        return connection
    }

    /// Runs `body` against the connection, turning a ``SQLiteError`` into a
    /// ``StashError`` and recovering from corruption (see
    /// ``handleDatabaseError(_:while:)``).
    ///
    /// - Parameter action: What is being done, for messages ("reading \"key\"").
    func perform<Result>(
        _ action: @autoclosure () -> String,
        _ body: (SQLiteConnection) throws(SQLiteError) -> Result
    ) throws(StashError) -> Result {
        let connection = try requireConnection()
        do throws(SQLiteError) {
            return try body(connection)
        } catch {
            throw handleDatabaseError(error, while: action())
        }
    }

    /// Maps a SQLite failure to the error to throw.
    ///
    /// Corruption (`SQLITE_CORRUPT`, `SQLITE_NOTADB`) sets the manifest aside and
    /// starts an empty one, then yields ``StashError/Code/corrupted``.
    /// `SQLITE_TOOBIG` yields ``StashError/Code/valueTooLarge``. Anything else,
    /// including busy and locked, yields ``StashError/Code/databaseFailed`` and
    /// changes nothing on disk.
    func handleDatabaseError(_ error: SQLiteError, while action: String) -> StashError {
        if error.isCorruption {
            recoverFromCorruption(error, while: action)
            return StashError(
                .corrupted,
                "the cache manifest was found damaged while \(action); it was set aside and the cache restarted empty",
                cause: error
            )
        }
        if error.resultCode == SQLITE_TOOBIG {
            return StashError(.valueTooLarge, "SQLite's length limit was exceeded while \(action)", cause: error)
        }
        // Name the problem in the message itself ("database or disk is full"), not
        // only in the cause.
        return StashError(.databaseFailed, "SQLite failed while \(action): \(error.message)", cause: error)
    }
}
