#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

import CSQLite
import Logging

extension KVStorage {
    /// One value to store: what ``setValues(_:)`` takes for each entry.
    struct Write {
        /// A non-empty key.
        var key: String
        /// The bytes to store. Bound to SQLite without a copy when inline.
        var value: Data
        /// When the entry expires, in nanoseconds on ``KVStorage/clock``; `nil` for never.
        var expiration: Int64?
        /// Opaque bytes stored beside the value.
        var extendedData: Data?
    }

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
        let write = Write(key: key, value: value, expiration: expiration, extendedData: extendedData)
        if let failure = try setValues(CollectionOfOne(write)).first ?? nil {
            throw failure
        }
    }

    /// Stores every write in `writes`, in order, in ONE transaction: one commit
    /// (one WAL sync point, one update of the totals) for the whole batch. This is
    /// what group commit in ``DiskCacheCore`` calls with the writes that queued up
    /// while the previous commit was in flight.
    ///
    /// Each write behaves as ``setValue(_:forKey:expiration:extendedData:)``. A
    /// write that is invalid on its own (an empty key, an inline value past
    /// SQLite's limit) or whose file cannot be written fails alone: its slot of the
    /// result holds the error and the others are stored. Writes to the same key
    /// apply in order; the last one wins, and the files of the earlier ones are
    /// deleted after the commit like any replaced file.
    ///
    /// - Returns: One entry per write, in order: `nil` if it was stored, else why not.
    /// - Throws: ``StashError`` when the transaction itself fails (`.databaseFailed`,
    ///   `.corrupted`, `.closed`, `.ioFailed` when files kept vanishing): then no
    ///   write of the batch was stored, and every one of them failed with it.
    /// - Complexity: O(w log n) for w writes and n entries, plus writing the files.
    func setValues<Writes: Collection>(_ writes: Writes) throws(StashError) -> [StashError?] where Writes.Element == Write {
        let writes = Array(writes)
        var failures = [StashError?](repeating: nil, count: writes.count)
        for (index, write) in writes.enumerated() {
            do throws(StashError) { try Self.validate(write.key) } catch { failures[index] = error }
        }
        guard failures.contains(where: { $0 == nil }) else { return failures }
        let connection = try requireWritableConnection()
        var isInline = [Bool](repeating: true, count: writes.count)
        let maximumLength = connection.maximumLength
        for (index, write) in writes.enumerated() where failures[index] == nil {
            do throws(StashError) {
                isInline[index] = kind.storesInline(size: write.value.count)
                if isInline[index], write.value.count > maximumLength {
                    throw StashError(
                        .valueTooLarge,
                        "a value of \(write.value.count) bytes exceeds SQLite's limit of \(maximumLength) for key \(Self.describe(write.key))"
                    )
                }
            } catch {
                failures[index] = error
            }
        }
        let now = clock.nanosecondsNow

        // A file can vanish between its creation and the commit (another instance's
        // removeAll() moved data/ away, or a consistency check deleted it): the
        // check inside the transaction notices, and the lost files are written again.
        var files = [DataFile?](repeating: nil, count: writes.count)
        let maximumAttempts = 3
        for attempt in 1...maximumAttempts {
            for index in writes.indices where failures[index] == nil && !isInline[index] && files[index] == nil {
                do throws(StashError) {
                    files[index] = try writeDataFile(writes[index].value, forKey: writes[index].key)
                } catch {
                    failures[index] = error
                }
            }
            guard failures.contains(where: { $0 == nil }) else { return failures }
            let outcome: UpsertOutcome
            do throws(SQLiteError) {
                outcome = try connection.transaction { () throws(SQLiteError) -> UpsertOutcome in
                    let lost = files.indices.filter { index in files[index].map { !isLive($0) } ?? false }
                    if !lost.isEmpty {
                        return .filesLost(lost)
                    }
                    var totals = Manifest.TotalsChange()
                    var replaced: [String] = []
                    for (index, write) in writes.enumerated() where failures[index] == nil {
                        let file = files[index]
                        let previousFilename = try connection.withStatement(Manifest.SQL.selectPrevious) {
                            statement throws(SQLiteError) in
                            try statement.bind(write.key, at: 1)
                            guard try statement.step() == .row else { return nil as String? }
                            totals.remove(returnedBy: statement)
                            return statement.text(at: 0)
                        }
                        totals.add(size: write.value.count, hasFile: file != nil)
                        try upsert(connection, write, filename: file?.name, isInline: isInline[index], now: now)
                        if let previousFilename, previousFilename != file?.name {
                            replaced.append(previousFilename)
                        }
                    }
                    try applyTotals(connection, totals)
                    return .stored(replacedFilenames: replaced)
                }
            } catch {
                for case let file? in files { removeDataFile(file.name) }
                throw handleDatabaseError(error, while: describeStoring(writes, failures))
            }
            switch outcome {
            case .stored(let replacedFilenames):
                for (index, write) in writes.enumerated() where failures[index] == nil {
                    accessLog.forget(write.key)
                }
                for filename in replacedFilenames {
                    removeDataFile(filename)
                }
                return failures
            case .filesLost(let lost):
                for index in lost {
                    logger.notice(
                        "a value's file vanished before its row was committed; writing it again",
                        metadata: ["key": "\(Self.describe(writes[index].key))", "attempt": "\(attempt)"]
                    )
                    files[index] = nil
                }
            }
        }
        for case let file? in files { removeDataFile(file.name) }
        throw StashError(
            .ioFailed,
            "the file for \(describeStoring(writes, failures)) kept disappearing from \(dataPath) before it could be recorded"
        )
    }

    /// What the write transaction of ``setValues(_:)`` did.
    private enum UpsertOutcome {
        /// The rows were written; the replaced rows' files are now unreferenced.
        case stored(replacedFilenames: [String])
        /// These writes' new files were no longer in `data/`; nothing was written.
        case filesLost([Int])
    }

    /// "storing \"key\"", or "storing 8 values" for a batch, for messages.
    private func describeStoring(_ writes: [Write], _ failures: [StashError?]) -> String {
        let keys = writes.indices.filter { failures[$0] == nil }.map { writes[$0].key }
        return keys.count == 1 ? "storing \(Self.describe(keys[0]))" : "storing \(keys.count) values"
    }

    /// Inserts or replaces the row for `write`, binding the value and extended data
    /// without copying them.
    private func upsert(
        _ connection: SQLiteConnection, _ write: Write, filename: String?, isInline: Bool, now: Int64
    ) throws(SQLiteError) {
        try connection.withStatement(Manifest.SQL.upsert) { statement throws(SQLiteError) in
            try statement.bind(write.key, at: 1)
            try statement.bind(filename, at: 2)
            try statement.bind(Int64(write.value.count), at: 3)
            try statement.bind(now, at: 5)
            try statement.bind(write.expiration, at: 6)
            try withBytes(of: isInline ? write.value : nil) { valueBytes throws(SQLiteError) in
                try withBytes(of: write.extendedData) { extendedBytes throws(SQLiteError) in
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
