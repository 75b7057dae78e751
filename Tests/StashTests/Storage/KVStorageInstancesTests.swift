import Foundation
import Testing
@testable import Stash

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Several `KVStorage` instances on one directory, as the background consistency
/// check of a disk cache makes them (it opens an instance of its own).
@Suite struct KVStorageInstancesTests {
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
        let report = try checker.checkConsistency(afterListing: {
            hookRuns += 1
            // Between the check's listing and its transaction.
            try? other.removeAll()
            try? other.setValue(testBytes(40, seed: 9), forKey: "new")
        })
        #expect(hookRuns == 1)
        #expect(report.isClean, "\(report)")
        #expect(try other.value(forKey: "new")?.value == testBytes(40, seed: 9))
        #expect(try checker.value(forKey: "new")?.value == testBytes(40, seed: 9))
        #expect(try checker.totalCount() == 1)
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
        #expect(probe >= 0)
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
