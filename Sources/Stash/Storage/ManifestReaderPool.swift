#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

import Logging

// Reads that run beside the writer (issue #26).
//
// In WAL mode SQLite serves each connection's reads from a snapshot of its own,
// concurrently with other readers and with the writer. KVStorage has one
// connection, used under the cache's lock, so its reads used to wait for each
// other and for every commit. The pool keeps up to `capacity` more connections,
// opened read-only (`query_only`), each with a descriptor of data/ of its own:
// a read takes an idle one, runs the same SELECT as KVStorage.value(forKey:), reads
// the value's file if it has one, and gives the connection back. No lock is held
// meanwhile but the pool's own, for the moment of taking and giving back.
//
// Only the common case is served here: a row that is there, unexpired and whole,
// or no row at all. Anything else (an expired row, a file that is missing or
// damaged, a SQLite error of any kind, no idle reader) is `.unsure`, and the
// caller reads again through KVStorage under its lock, where the clean-up,
// logging and recovery live. Nothing is removed, logged or repaired here.
//
// Why a reader sees what it must: every SELECT runs in a read transaction of its
// own (the statement is reset after each use), which sees every transaction
// committed before it began. A write or removal that returned before the read
// started is therefore seen, from any thread. A file whose row was read may be
// deleted before it is opened (a concurrent overwrite or removal): the read is
// then `.unsure`, and the locked read sees the new state.

/// Read-only connections to a cache's manifest, for reads that need none of the
/// cache's lock. Thread-safe: a lock of its own guards the idle readers and the
/// counts, held only to take or give back a reader (O(1)); opening a reader (a
/// SQLite open and an `open` of data/, tens of microseconds) happens outside it.
final class ManifestReaderPool: Sendable {
    // A ManifestReader (not Sendable) is used by one thread at a time: the one
    // that took it from `idle`, until it gives it back.

    /// What a read found.
    enum Outcome {
        /// The row, unexpired, and its value's bytes, whole; whether the read's
        /// access time is to be recorded (``KVStorageOptions/accessTimeResolution``).
        case found(KVStorage.Item, recordsAccess: Bool)
        /// No row for the key.
        case absent
        /// Anything else: read again under the cache's lock.
        case unsure
    }

    /// The pool's mutable state, behind the pool's lock.
    private struct State {
        var idle: [ManifestReader] = []
        /// Readers open, idle or in use.
        var open = 0
        /// Bumped by ``ManifestReaderPool/retireAll()``: a reader opened before is
        /// closed when given back.
        var generation = 0
        var isClosed = false
    }

    private let state = LockedValue(State())

    private let manifestPath: String
    private let dataPath: String
    private let busyTimeout: Duration
    /// ``KVStorageOptions/accessTimeResolution``, in nanoseconds.
    private let accessTimeResolution: Int64
    private let logger: Logger
    /// The most readers open at once: twice the number of processors, from 4 to 16
    /// (more threads than processors read at once when some wait for the disk, or
    /// are descheduled holding a reader). Past it a read is `.unsure` rather than
    /// waiting: the cache's own connection serves it, under the cache's lock.
    let capacity: Int

    init(manifestPath: String, dataPath: String, options: KVStorageOptions, logger: Logger) {
        self.manifestPath = manifestPath
        self.dataPath = dataPath
        busyTimeout = options.busyTimeout
        accessTimeResolution = options.accessTimeResolution.nanosecondsClamped
        self.logger = logger
        capacity = Swift.min(Swift.max(2 * ProcessInfo.processInfo.activeProcessorCount, 4), 16)
    }

    /// Reads `key` (in stored form) on a reader of the pool, as of `now` on the
    /// cache's clock. Never blocks beyond the pool's lock and the read itself
    /// (SQLite's busy timeout bounds a wait for a lock, which WAL readers meet only
    /// while another connection recovers the WAL).
    ///
    /// With `readsFiles` false, a value kept in a file of its own is not read: the
    /// outcome is `.unsure` (the async API's read on the caller's thread, which
    /// leaves file reads to the cache's I/O queue).
    ///
    /// - Complexity: O(log n) in the number of entries, plus O(size) to copy the value.
    func read(_ key: String, now: Int64, readsFiles: Bool = true) -> Outcome {
        guard let (reader, generation) = take() else { return .unsure }
        let (outcome, healthy) = reader.read(
            key, now: now, accessTimeResolution: accessTimeResolution, readsFiles: readsFiles)
        giveBack(reader, openedIn: generation, healthy: healthy)
        return outcome
    }

    /// Closes every idle reader, and every reader in use once it is given back: the
    /// manifest they read may no longer be the cache's.
    func retireAll() {
        let retired = state.withLock { state -> [ManifestReader] in
            state.generation += 1
            state.open -= state.idle.count
            defer { state.idle.removeAll() }
            return state.idle
        }
        for reader in retired { reader.close() }
    }

    /// ``retireAll()``, and no reader opens again: every later read is `.unsure`.
    func close() {
        state.withLock { $0.isClosed = true }
        retireAll()
    }

    /// The number of readers open (for tests).
    var openCount: Int { state.withLock { $0.open } }

    /// An idle reader, or a new one if fewer than ``capacity`` are open; `nil` when
    /// all are busy, after `close()`, or when one cannot be opened.
    private func take() -> (ManifestReader, generation: Int)? {
        let taken = state.withLock { state -> (reader: ManifestReader?, generation: Int)? in
            guard !state.isClosed else { return nil }
            if let reader = state.idle.popLast() { return (reader, state.generation) }
            guard state.open < capacity else { return nil }
            state.open += 1
            return (nil, state.generation)
        }
        guard let taken else { return nil }
        if let reader = taken.reader { return (reader, taken.generation) }
        do {
            return (try ManifestReader(manifestPath: manifestPath, dataPath: dataPath, busyTimeout: busyTimeout),
                    taken.generation)
        } catch {
            state.withLock { $0.open -= 1 }
            logger.debug("could not open a manifest reader; reading through the cache's connection",
                         metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// Puts `reader` back among the idle ones, or closes it: when a read found it
    /// unhealthy (an error, a file missing from its data/), or it was opened before
    /// the last ``retireAll()``.
    private func giveBack(_ reader: ManifestReader, openedIn generation: Int, healthy: Bool) {
        let kept = state.withLock { state -> Bool in
            guard healthy, generation == state.generation, !state.isClosed else {
                state.open -= 1
                return false
            }
            state.idle.append(reader)
            return true
        }
        if !kept { reader.close() }
    }
}

/// One read-only connection to the manifest and a descriptor of `data/`, used by
/// one thread at a time. Not thread-safe: ``ManifestReaderPool`` hands it out.
final class ManifestReader {
    private let connection: SQLiteConnection
    private var dataDirectory: Int32?
    private let dataPath: String

    /// Opens the manifest at `manifestPath` (which must exist) read-only.
    init(manifestPath: String, dataPath: String, busyTimeout: Duration) throws(SQLiteError) {
        connection = try SQLiteConnection(path: manifestPath, busyTimeout: busyTimeout, create: false)
        do {
            try connection.execute("PRAGMA query_only = ON")
        } catch {
            connection.close()
            throw error
        }
        self.dataPath = dataPath
    }

    deinit {
        close()
    }

    /// Closes the connection and the descriptor. Idempotent.
    func close() {
        connection.close()
        if let dataDirectory {
            FileSystem.closeDescriptor(dataDirectory)
            self.dataDirectory = nil
        }
    }

    /// See ``ManifestReaderPool/read(_:now:)``; `healthy` is false when the reader
    /// should not be used again (a SQLite error, or a value file its data/ lacks:
    /// data/ may have been replaced by a `removeAll()`).
    func read(
        _ key: String, now: Int64, accessTimeResolution: Int64, readsFiles: Bool
    ) -> (outcome: ManifestReaderPool.Outcome, healthy: Bool) {
        func found(_ value: Data, _ row: KVStorage.Row) -> ManifestReaderPool.Outcome {
            .found(row.item(value), recordsAccess: row.needsAccessRecorded(at: now, resolution: accessTimeResolution))
        }
        let row: KVStorage.Row?
        do {
            row = try KVStorage.selectRow(key, on: connection)
        } catch {
            return (.unsure, false)
        }
        guard let row else { return (.absent, true) }
        if let expiration = row.expirationTime, expiration <= now { return (.unsure, true) }
        guard let filename = row.filename else {
            let bytes = row.inlineData ?? Data()
            return bytes.count == row.size ? (found(bytes, row), true) : (.unsure, true)
        }
        guard readsFiles else { return (.unsure, true) }
        guard let value = readFile(filename, expectedSize: row.size, forKey: key) else { return (.unsure, false) }
        return (found(value, row), true)
    }

    /// The value file's bytes, or `nil` for any problem (the locked read looks again).
    private func readFile(_ name: String, expectedSize: Int, forKey key: String) -> Data? {
        guard KVStorage.isDataFileName(name) else { return nil }
        do throws(SystemCallError) {
            let directory: Int32
            if let dataDirectory {
                directory = dataDirectory
            } else {
                directory = try FileSystem.openDirectory(dataPath)
                dataDirectory = directory
            }
            let descriptor = try FileSystem.openForReading(name, in: directory)
            defer { FileSystem.closeDescriptor(descriptor) }
            guard case .success(let bytes) = try? KVStorage.readValueFile(descriptor, expectedSize: expectedSize, forKey: key)
            else { return nil }
            return bytes
        } catch {
            return nil
        }
    }
}
