#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

import CSQLite
import Logging

extension KVStorage {
    /// The entry for `key`, or `nil` if there is none.
    ///
    /// One indexed `SELECT`, plus one file read for a file value. The read does not
    /// write to the manifest: its access time is kept in memory until
    /// ``flushAccessTimes()`` (or until ``KVStorageOptions/accessFlushThreshold``
    /// reads accumulate). Exceptions, each logged or obvious:
    /// - an expired entry is a miss and is removed;
    /// - an entry whose file is missing, truncated, replaced by a link or not a
    ///   regular file is a miss and is removed (a link is removed as a link, its
    ///   target is never opened);
    /// - a damaged manifest is set aside and the read is a miss.
    ///
    /// - Complexity: O(log n) in the number of entries, plus O(size) to copy the value.
    /// - Throws: ``StashError``: `.invalidKey` for an empty key; `.databaseFailed`
    ///   if SQLite fails (e.g. locked past the busy timeout); `.ioFailed` if the
    ///   value's file exists but cannot be read (e.g. too many open files);
    ///   `.closed` after `close()`.
    func value(forKey key: String) throws(StashError) -> Item? {
        try Self.validate(key)
        // Two passes: if the file looked damaged but the row changed meanwhile
        // (another instance replaced the value), read the new row.
        for _ in 0..<2 {
            let now = clock.nanosecondsNow
            let row: Row?
            do {
                row = try perform("reading \(Self.describe(key))") { connection throws(SQLiteError) in
                    try Self.selectRow(key, on: connection)
                }
            } catch where error.code == .corrupted {
                return nil
            }
            guard let row else { return nil }

            if let expiration = row.expirationTime, expiration <= now {
                removeAfterMiss("expired") { () throws(StashError) in try removeExpiredEntry(key, now: now) }
                return nil
            }

            let value: Data
            if let filename = row.filename {
                switch try readDataFile(filename, expectedSize: row.size, forKey: key) {
                case .success(let bytes):
                    value = bytes
                case .damaged(let reason):
                    logger.warning(
                        "a value's file is damaged; dropping the entry",
                        metadata: ["key": "\(Self.describe(key))", "file": "\(filename)", "reason": "\(reason)"]
                    )
                    var removed = true
                    removeAfterMiss("damaged") { () throws(StashError) in
                        removed = try removeDamagedEntry(key, filename: filename)
                    }
                    removeDataFile(filename)
                    if removed { return nil }
                    continue  // the row changed under us: look again
                }
            } else {
                let bytes = row.inlineData ?? Data()
                guard bytes.count == row.size else {
                    logger.warning(
                        "an inline value has the wrong length; dropping the entry",
                        metadata: ["key": "\(Self.describe(key))", "expected": "\(row.size)", "actual": "\(bytes.count)"]
                    )
                    removeAfterMiss("damaged") { () throws(StashError) in
                        _ = try removeDamagedInlineEntry(key, size: row.size)
                    }
                    return nil
                }
                value = bytes
            }

            if row.needsAccessRecorded(at: now, resolution: options.accessTimeResolution.nanosecondsClamped) {
                recordAccess(key, at: now)
            }
            return row.item(value)
        }
        return nil
    }

    /// Runs the clean-up that follows a miss (removing an expired or damaged entry).
    /// A failure (say, the database stayed locked) is logged, not thrown: the read
    /// is a miss either way, and the entry is removed by a later read or trim.
    private func removeAfterMiss(_ what: String, _ body: () throws(StashError) -> Void) {
        do {
            try body()
        } catch {
            logger.notice("could not remove a \(what) entry after a miss", metadata: ["error": "\(error)"])
        }
    }

    /// One manifest row as ``value(forKey:)`` reads it.
    struct Row {
        var filename: String?
        var size: Int
        var inlineData: Data?
        var modificationTime: Int64
        var expirationTime: Int64?
        /// The last access the manifest records (a later one may be pending).
        var lastAccessTime: Int64

        /// Whether a read at `now` is to be recorded: the entry's first read since it
        /// was written always is (so that an entry read once outranks those never
        /// read, however soon), a later one when it is at least `resolution`
        /// nanoseconds (``KVStorageOptions/accessTimeResolution``) after the
        /// recorded access.
        func needsAccessRecorded(at now: Int64, resolution: Int64) -> Bool {
            lastAccessTime <= modificationTime || now &- lastAccessTime >= resolution
        }

        /// The entry this row describes, with its value's bytes.
        func item(_ value: Data) -> Item {
            Item(value: value, size: size, isInline: filename == nil, modificationTime: modificationTime,
                 expirationTime: expirationTime)
        }
    }

    /// `key`'s row on `connection`, or `nil` if there is none: one indexed `SELECT`.
    /// ``value(forKey:)``'s query, and ``ManifestReader``'s.
    static func selectRow(_ key: String, on connection: SQLiteConnection) throws(SQLiteError) -> Row? {
        try connection.withStatement(Manifest.SQL.selectItem) { statement throws(SQLiteError) -> Row? in
            try statement.bind(key, at: 1)
            guard try statement.step() == .row else { return nil }
            return Row(
                filename: statement.text(at: 0),
                size: Int(statement.int64(at: 1)),
                inlineData: statement.blob(at: 2),
                modificationTime: statement.int64(at: 3),
                expirationTime: statement.optionalInt64(at: 4),
                lastAccessTime: statement.int64(at: 5)
            )
        }
    }

    /// Whether an unexpired entry exists for `key`. Does not count as an access and
    /// does not open the value's file (a damaged file is found by the next read).
    ///
    /// - Complexity: O(log n).
    /// - Throws: ``StashError``: `.invalidKey`, `.databaseFailed`, `.closed`.
    func contains(_ key: String) throws(StashError) -> Bool {
        try Self.validate(key)
        let now = clock.nanosecondsNow
        do {
            return try perform("looking up \(Self.describe(key))") { connection throws(SQLiteError) in
                try connection.withStatement(Manifest.SQL.selectExpiration) { statement throws(SQLiteError) in
                    try statement.bind(key, at: 1)
                    guard try statement.step() == .row else { return false }
                    guard let expiration = statement.optionalInt64(at: 0) else { return true }
                    return expiration > now
                }
            }
        } catch where error.code == .corrupted {
            return false
        }
    }

    /// The extended data stored with `key`'s unexpired entry, or `nil` if there is
    /// no such entry or it has no extended data. Does not count as an access.
    ///
    /// - Complexity: O(log n) plus the data's length.
    /// - Throws: ``StashError``: `.invalidKey`, `.databaseFailed`, `.closed`.
    func extendedData(forKey key: String) throws(StashError) -> Data? {
        try Self.validate(key)
        let now = clock.nanosecondsNow
        do {
            return try perform("reading extended data of \(Self.describe(key))") { connection throws(SQLiteError) in
                try connection.withStatement(Manifest.SQL.selectExtendedData) { statement throws(SQLiteError) -> Data? in
                    try statement.bind(key, at: 1)
                    guard try statement.step() == .row else { return nil }
                    if let expiration = statement.optionalInt64(at: 0), expiration <= now { return nil }
                    return statement.blob(at: 1)
                }
            }
        } catch where error.code == .corrupted {
            return nil
        }
    }
}
