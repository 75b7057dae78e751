import Dispatch
import Foundation
import Testing
@testable import Stash

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite(.timeLimit(.minutes(5))) struct KVStorageSharingTests {
    @Test func twoInstancesSeeEachOthersWrites() throws {
        let fixture = try StorageFixture()
        let first = try fixture.open(kind: .mixed(inlineThreshold: 10))
        let second = try fixture.open(kind: .mixed(inlineThreshold: 10))
        try first.setValue(testBytes(5), forKey: "inline")
        try first.setValue(testBytes(50), forKey: "file")
        #expect(try second.value(forKey: "inline")?.value == testBytes(5))
        #expect(try second.value(forKey: "file")?.value == testBytes(50))
        #expect(try second.count() == 2)

        // Cached totals follow the other instance's commits (PRAGMA data_version).
        #expect(try first.totalSize() == 55)
        try second.setValue(testBytes(60, seed: 2), forKey: "file")
        #expect(try first.totalSize() == 65)
        #expect(try first.value(forKey: "file")?.value == testBytes(60, seed: 2))
        #expect(fixture.dataFiles().count == 1)  // the replaced file was deleted

        #expect(try second.removeValue(forKey: "inline"))
        #expect(try first.value(forKey: "inline") == nil)
        #expect(try first.count() == 1)
    }

    /// Two instances (as two processes) creating one new cache at the same moment: each holds a
    /// lock the other needs while switching the manifest to WAL, and SQLite answers one of them
    /// busy at once, without its busy handler. Both must open. A CI run under the address
    /// sanitizer met it in the two-process reliability test ("database is locked" on
    /// `PRAGMA journal_mode = WAL`). Here the race runs 500 times: before the retry in
    /// `Manifest.open`, several of 1,000 rounds failed so.
    @Test func twoInstancesCreatingOneNewCacheAtOnceBothOpen() throws {
        for _ in 0..<500 {
            let fixture = try StorageFixture()
            let failures = LockedValue<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 2) { _ in
                do {
                    let storage = try fixture.open()
                    try storage.setValue(testBytes(5), forKey: "k")
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            #expect(failures.withLock { $0 }.isEmpty)
        }
    }

    @Test func removeAllInOneInstanceEmptiesTheOther() throws {
        let fixture = try StorageFixture()
        let first = try fixture.open(kind: .file)
        let second = try fixture.open(kind: .file)
        for index in 0..<10 {
            try first.setValue(testBytes(20), forKey: "\(index)")
        }
        _ = try second.value(forKey: "3")  // a pending access for an entry about to vanish
        try first.removeAll()
        #expect(try second.value(forKey: "3") == nil)
        #expect(try second.count() == 0)
        try second.flushAccessTimes()
        try second.setValue(testBytes(20), forKey: "after")
        #expect(try first.value(forKey: "after")?.value == testBytes(20))
    }

    @Test func aFileMovedAwayBeforeItsRowCommitsIsDetected() throws {
        let fixture = try StorageFixture()
        let writer = try fixture.open(kind: .file)
        let other = try fixture.open(kind: .file)
        let file = try writer.writeDataFile(testBytes(10), forKey: "k")
        #expect(writer.isLive(file))
        try other.removeAll()  // moves data/, with the unrecorded file, to the trash
        #expect(!writer.isLive(file))
        try writer.setValue(testBytes(10), forKey: "k")  // writes a new file into the new data/
        #expect(try other.value(forKey: "k")?.value == testBytes(10))
    }

    /// Each instance keeps `data/` open. After another instance's removeAll() moved
    /// that directory to the trash, reads, writes and deletes must reach the new
    /// `data/`: a file missing from the old directory is not a damaged entry.
    @Test func aKeptDataDirectoryFollowsAnotherInstancesRemoveAll() throws {
        let fixture = try StorageFixture()
        let first = try fixture.open(kind: .file)
        let second = try fixture.open(kind: .file)
        try first.setValue(testBytes(10), forKey: "before")
        #expect(try first.value(forKey: "before")?.value == testBytes(10))  // data/ is open now

        try second.removeAll()
        _ = second.emptyTrash()  // the old directory is gone, not just moved
        try second.setValue(testBytes(20, seed: 2), forKey: "theirs")
        #expect(try first.value(forKey: "theirs")?.value == testBytes(20, seed: 2))
        #expect(!fixture.log.contains(level: .warning, "damaged"))

        try first.setValue(testBytes(30, seed: 3), forKey: "mine")
        #expect(try second.value(forKey: "mine")?.value == testBytes(30, seed: 3))

        try second.removeAll()
        try second.setValue(testBytes(40, seed: 4), forKey: "again")
        #expect(try first.removeValue(forKey: "again"))  // deletes the file in the new data/
        #expect(fixture.dataFiles().isEmpty)

        var options = KVStorageOptions()
        options.orphanGracePeriod = .zero
        #expect(try fixture.open(kind: .file, options: options).checkConsistency().isClean)
    }

    @Test func aWriterNoticesTheManifestWasReplacedAndWritesToTheNewOne() throws {
        let fixture = try StorageFixture()
        let stale = try fixture.open(kind: .sqlite)
        try stale.setValue(Data([1]), forKey: "old")
        // Another instance set the manifest aside (as after finding it damaged) and started afresh.
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.moveItem(atPath: fixture.manifestPath + suffix, toPath: fixture.directory.appending("aside\(suffix)"))
        }
        let fresh = try fixture.open(kind: .sqlite)
        try fresh.setValue(Data([2]), forKey: "fresh")

        try stale.setValue(Data([3]), forKey: "acknowledged")
        #expect(try fresh.value(forKey: "acknowledged")?.value == Data([3]))
        #expect(try stale.value(forKey: "fresh")?.value == Data([2]))
        #expect(fixture.log.contains(level: .notice, "reopening"))
    }

    @Test func aDeletedCacheDirectoryIsRecreatedByTheNextWrite() throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open(kind: .file)
        try storage.setValue(testBytes(10), forKey: "a")
        try FileManager.default.removeItem(atPath: fixture.path)
        try storage.setValue(testBytes(10), forKey: "b")
        #expect(try storage.value(forKey: "b")?.value == testBytes(10))
        #expect(try storage.value(forKey: "a") == nil)
        #expect(try storage.count() == 1)
    }

    @Test func concurrentWritersOnTwoThreadsLoseNothing() throws {
        let fixture = try StorageFixture()
        let path = fixture.path
        let clock = fixture.clock
        let logger = fixture.log.logger
        _ = try fixture.open()  // create the directory and schema once
        let failures = LockedList()
        DispatchQueue.concurrentPerform(iterations: 2) { thread in
            do {
                let storage = try KVStorage(directory: path, kind: .mixed(inlineThreshold: 64), clock: clock, logger: logger)
                for index in 0..<150 {
                    let size = index % 2 == 0 ? 16 : 200
                    try storage.setValue(testBytes(size, seed: UInt8(thread)), forKey: "\(thread)-\(index)")
                    if index % 10 == 0 {
                        _ = try storage.value(forKey: "\(1 - thread)-\(index / 2)")
                        _ = try storage.count()
                    }
                }
                storage.close()
            } catch {
                failures.append("\(error)")
            }
        }
        #expect(failures.items.isEmpty)
        let storage = try fixture.open()
        #expect(try storage.count() == 300)
        for thread in 0..<2 {
            for index in 0..<150 {
                let size = index % 2 == 0 ? 16 : 200
                #expect(try storage.value(forKey: "\(thread)-\(index)")?.value == testBytes(size, seed: UInt8(thread)))
            }
        }
        #expect(try storage.checkConsistency().isClean)
    }
}

// Several instances on one directory as a disk cache makes them: its background
// consistency check opens an instance of its own.
extension KVStorageSharingTests {
    /// A consistency check whose `data/` listing is overtaken by another
    /// instance's removeAll (which moves data/ to the trash and creates a new one)
    /// followed by a write: the check must not take the new row for one whose file
    /// is missing (it would delete it, and its file would be left an orphan).
    @Test func aCheckOvertakenByRemoveAllKeepsRowsWrittenSince() throws {
        let fixture = try StorageFixture()
        let checker = try fixture.open(kind: .file)
        let other = try fixture.open(kind: .file)
        for index in 0..<4 {
            try other.setValue(testBytes(30, seed: UInt8(index)), forKey: "old-\(index)")
        }
        var hookRuns = 0
        var hookError: (any Error)?
        let report = try checker.checkConsistency(afterListing: {
            hookRuns += 1
            // Between the check's listing and its transaction.
            do {
                try other.removeAll()
                try other.setValue(testBytes(40, seed: 9), forKey: "new")
            } catch {
                hookError = error
            }
        })
        #expect(hookRuns == 1)
        #expect(hookError == nil, "\(String(describing: hookError))")
        #expect(report.isClean, "\(report)")
        #expect(try other.value(forKey: "new")?.value == testBytes(40, seed: 9))
        #expect(try checker.value(forKey: "new")?.value == testBytes(40, seed: 9))
        #expect(try checker.count() == 1)
        #expect(fixture.dataFiles().count == 1)
        #expect(try checker.checkConsistency().isClean)
    }

    #if os(Linux)
    /// Opening a second instance must not release the SQLite locks of the first.
    ///
    /// SQLite holds POSIX advisory locks on `manifest.sqlite` (in WAL mode, a
    /// connection keeps a shared lock for as long as it is open), and closing ANY
    /// descriptor of the file releases all of the process's locks on it. Opening
    /// used to `open()`/`close()` the manifest to create it and read its identity:
    /// then another process, closing its own connection, would take itself for the
    /// last one and delete the -wal and -shm under the live instance.
    ///
    /// Observed with an open-file-description lock query (`F_OFD_GETLK`, Linux),
    /// which sees this process's own POSIX locks as conflicting.
    @Test func openingASecondInstanceKeepsTheFirstsLocks() throws {
        let fixture = try StorageFixture()
        let first = try fixture.open()
        try first.setValue(testBytes(10), forKey: "k")
        #expect(try first.value(forKey: "k") != nil)
        let probe = open(fixture.manifestPath, O_RDONLY | O_CLOEXEC)
        try #require(probe >= 0)
        // Closed last: closing it releases this process's locks on the file too.
        defer { close(probe) }

        #expect(try Self.sharedLockIsHeld(probe), "the first instance holds no shared lock to begin with")
        let second = try fixture.open()
        #expect(try second.value(forKey: "k") != nil)
        #expect(try Self.sharedLockIsHeld(probe), "opening a second instance released the first's lock")
        second.close()
        #expect(try Self.sharedLockIsHeld(probe), "closing the second instance released the first's lock")
        #expect(try first.value(forKey: "k") != nil)
        first.close()
    }

    /// Whether some lock conflicts with a write lock on SQLite's shared-lock range
    /// of the database file (`SHARED_FIRST` = `PENDING_BYTE` + 2, 510 bytes).
    private static func sharedLockIsHeld(_ descriptor: Int32) throws -> Bool {
        let pendingByte: Int = 0x4000_0000
        var query = flock()
        query.l_type = Int16(F_WRLCK)
        query.l_whence = Int16(SEEK_SET)
        query.l_start = off_t(pendingByte + 2)
        query.l_len = 510
        query.l_pid = 0
        // F_OFD_GETLK: 36 on Linux (not every libc header exports the name).
        let getOpenFileDescriptionLock: Int32 = 36
        guard fcntl(descriptor, getOpenFileDescriptionLock, &query) == 0 else {
            throw SystemCallError(call: "fcntl(F_OFD_GETLK)", errno: errno)
        }
        return query.l_type != Int16(F_UNLCK)
    }
    #endif
}

/// A thread-safe list of strings, for collecting failures from several threads.
final class LockedList: Sendable {
    private let storage = LockedValue<[String]>([])

    func append(_ item: String) {
        storage.withLock { $0.append(item) }
    }

    var items: [String] {
        storage.withLock { $0 }
    }
}
