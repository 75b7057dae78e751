import Dispatch
import Foundation
import Testing
@testable import Stash

@Suite struct KVStorageSharingTests {
    @Test func twoInstancesSeeEachOthersWrites() throws {
        let fixture = try StorageFixture()
        let first = try fixture.open(kind: .mixed(inlineThreshold: 10))
        let second = try fixture.open(kind: .mixed(inlineThreshold: 10))
        try first.setValue(testBytes(5), forKey: "inline")
        try first.setValue(testBytes(50), forKey: "file")
        #expect(try second.value(forKey: "inline")?.value == testBytes(5))
        #expect(try second.value(forKey: "file")?.value == testBytes(50))
        #expect(try second.totalCount() == 2)

        // Cached totals follow the other instance's commits (PRAGMA data_version).
        #expect(try first.totalSize() == 55)
        try second.setValue(testBytes(60, seed: 2), forKey: "file")
        #expect(try first.totalSize() == 65)
        #expect(try first.value(forKey: "file")?.value == testBytes(60, seed: 2))
        #expect(fixture.dataFiles().count == 1)  // the replaced file was deleted

        #expect(try second.removeValue(forKey: "inline"))
        #expect(try first.value(forKey: "inline") == nil)
        #expect(try first.totalCount() == 1)
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
        #expect(try second.totalCount() == 0)
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
        #expect(try storage.totalCount() == 1)
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
                        _ = try storage.totalCount()
                    }
                }
                storage.close()
            } catch {
                failures.append("\(error)")
            }
        }
        #expect(failures.items.isEmpty)
        let storage = try fixture.open()
        #expect(try storage.totalCount() == 300)
        for thread in 0..<2 {
            for index in 0..<150 {
                let size = index % 2 == 0 ? 16 : 200
                #expect(try storage.value(forKey: "\(thread)-\(index)")?.value == testBytes(size, seed: UInt8(thread)))
            }
        }
        #expect(try storage.checkConsistency().isClean)
    }
}

/// A thread-safe list of strings, for collecting failures from several threads.
final class LockedList: @unchecked Sendable {
    // @unchecked Sendable: `storage` is only read or written with `lock` held.
    private let lock = Lock()
    private var storage: [String] = []

    func append(_ item: String) {
        lock.withLock { storage.append(item) }
    }

    var items: [String] {
        lock.withLock { storage }
    }
}
