#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

import CSQLite
import Logging

extension KVStorage {
    /// Stores `value` under `key`, replacing any previous entry.
    ///
    /// The value goes inline or to a new file according to ``kind``. The entry's
    /// modification and last-access times are now; a pending access time for the key
    /// is dropped. When replacing a file value, the old file is deleted only after
    /// the new row has committed, so a failure keeps the old value intact.
    ///
    /// - Parameters:
    ///   - value: The bytes to store. Bound to SQLite without a copy when inline.
    ///   - key: A non-empty key.
    ///   - expiration: When the entry expires, in nanoseconds on ``clock``; `nil`
    ///     (the default) for never. A time at or before now makes the entry
    ///     immediately expired.
    ///   - extendedData: Opaque bytes stored beside the value; `nil` by default.
    /// - Throws: ``StashError``: `.invalidKey` for an empty key; `.valueTooLarge`
    ///   past SQLite's limit for an inline value; `.ioFailed` if the file cannot be
    ///   written; `.databaseFailed` if the row cannot be committed (nothing changes
    ///   then); `.corrupted` if the manifest was found damaged (it is reset and the
    ///   value not stored); `.closed` after `close()`.
    func setValue(_ value: Data, forKey key: String, expiration: Int64? = nil, extendedData: Data? = nil) throws(StashError) {
        try Self.validate(key)
        let connection = try requireWritableConnection()
        let isInline = kind.storesInline(size: value.count)
        if isInline, value.count > connection.maximumLength {
            throw StashError(
                .valueTooLarge,
                "a value of \(value.count) bytes exceeds SQLite's limit of \(connection.maximumLength) for key \(Self.describe(key))"
            )
        }
        let now = clock.nanosecondsNow

        // A file can vanish between its rename and the commit (another instance's
        // removeAll() moved data/ away, or a consistency check deleted it): the
        // check inside the transaction notices, and the file is written again.
        let maximumAttempts = 3
        for attempt in 1...maximumAttempts {
            var file: DataFile?
            if !isInline {
                file = try writeDataFile(value, forKey: key)
            }
            let outcome: UpsertOutcome
            do throws(SQLiteError) {
                outcome = try connection.transaction { () throws(SQLiteError) -> UpsertOutcome in
                    if let file, !isLive(file) {
                        return .fileLost
                    }
                    var totals = Manifest.TotalsChange()
                    let previousFilename = try connection.withStatement(Manifest.SQL.selectPrevious) { statement throws(SQLiteError) in
                        try statement.bind(key, at: 1)
                        guard try statement.step() == .row else { return nil as String? }
                        totals.remove(returnedBy: statement)
                        return statement.text(at: 0)
                    }
                    totals.add(size: value.count, hasFile: file != nil)
                    try upsert(
                        connection, key: key, filename: file?.name, value: isInline ? value : nil, size: value.count,
                        now: now, expiration: expiration, extendedData: extendedData
                    )
                    try applyTotals(connection, totals)
                    return .stored(previousFilename: previousFilename)
                }
            } catch {
                if let file { removeDataFile(file.name) }
                throw handleDatabaseError(error, while: "storing \(Self.describe(key))")
            }
            switch outcome {
            case .stored(let previousFilename):
                pendingAccessTimes[key] = nil
                if let previousFilename, previousFilename != file?.name {
                    removeDataFile(previousFilename)
                }
                return
            case .fileLost:
                logger.notice(
                    "a value's file vanished before its row was committed; writing it again",
                    metadata: ["key": "\(Self.describe(key))", "attempt": "\(attempt)"]
                )
            }
        }
        throw StashError(
            .ioFailed,
            "the file for \(Self.describe(key)) kept disappearing from \(dataPath) before it could be recorded"
        )
    }

    /// What the write transaction of ``setValue(_:forKey:expiration:extendedData:)`` did.
    private enum UpsertOutcome {
        /// The row was written; the replaced row's file, if any, is now unreferenced.
        case stored(previousFilename: String?)
        /// The new file was no longer in `data/`; nothing was written.
        case fileLost
    }

    /// Inserts or replaces the row for `key`, binding the value and extended data
    /// without copying them.
    private func upsert(
        _ connection: SQLiteConnection, key: String, filename: String?, value: Data?, size: Int,
        now: Int64, expiration: Int64?, extendedData: Data?
    ) throws(SQLiteError) {
        try connection.withStatement(Manifest.SQL.upsert) { statement throws(SQLiteError) in
            try statement.bind(key, at: 1)
            try statement.bind(filename, at: 2)
            try statement.bind(Int64(size), at: 3)
            try statement.bind(now, at: 5)
            try statement.bind(expiration, at: 6)
            try withBytes(of: value) { valueBytes throws(SQLiteError) in
                try withBytes(of: extendedData) { extendedBytes throws(SQLiteError) in
                    if let valueBytes { try statement.bindStatic(valueBytes, at: 4) } else { try statement.bindNull(at: 4) }
                    if let extendedBytes { try statement.bindStatic(extendedBytes, at: 7) } else { try statement.bindNull(at: 7) }
                    // Step while the buffers are valid; withStatement clears the bindings after.
                    try statement.step()
                }
            }
        }
    }
}

/// Calls `body` with the bytes of `data` (no copy), or with `nil` when `data` is `nil`.
func withBytes<Result>(
    of data: Data?,
    _ body: (UnsafeRawBufferPointer?) throws(SQLiteError) -> Result
) throws(SQLiteError) -> Result {
    guard let data else { return try body(nil) }
    // Data.withUnsafeBytes rethrows untyped errors; carry the typed one through a Result.
    let result = data.withUnsafeBytes { bytes in
        Swift.Result { () throws(SQLiteError) -> Result in try body(bytes) }
    }
    return try result.get()
}
