import Foundation
import Testing
@testable import Stash

@Suite(.timeLimit(.minutes(5))) struct KVStorageTrimTests {
    /// Writes keys "0"…"n-1", one nanosecond apart, 10 bytes each (files above 4).
    func populate(_ storage: KVStorage, _ fixture: StorageFixture, count: Int, size: Int = 10) throws {
        for index in 0..<count {
            try storage.setValue(testBytes(size, seed: UInt8(index)), forKey: "\(index)")
            fixture.clock.advance(by: .nanoseconds(1))
        }
    }

    func keys(_ storage: KVStorage, upTo count: Int) throws -> [String] {
        try (0..<count).map(String.init).filter { try storage.contains($0) }
    }

    @Test func accessTimeResolutionRecordsTheFirstReadThenOncePerPeriod() throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open(options: KVStorageOptions(accessTimeResolution: .seconds(1)))
        try populate(storage, fixture, count: 2)  // "0" at t, "1" at t + 1 ns
        // Each entry's first read since its write is recorded, however soon.
        _ = try storage.value(forKey: "0")
        fixture.clock.advance(by: .nanoseconds(1))
        _ = try storage.value(forKey: "1")
        #expect(storage.pendingAccessCount == 2)
        try storage.flushAccessTimes()
        // A later read within the resolution is not: "0" stays older than "1".
        fixture.clock.advance(by: .milliseconds(999))
        _ = try storage.value(forKey: "0")
        #expect(storage.pendingAccessCount == 0)
        // One a whole resolution after the recorded access is.
        fixture.clock.advance(by: .milliseconds(1))
        _ = try storage.value(forKey: "0")
        #expect(storage.pendingAccessCount == 1)
        #expect(try storage.trim(toCount: 1) == 1)
        #expect(try keys(storage, upTo: 2) == ["0"])
    }

    @Test func trimToCountRemovesLeastRecentlyUsedIncludingPendingReads() throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open(kind: .mixed(inlineThreshold: 4), options: KVStorageOptions(trimBatchSize: 2))
        try populate(storage, fixture, count: 6)
        // Reads of 0 and 1 are only in memory until the trim flushes them.
        _ = try storage.value(forKey: "0")
        fixture.clock.advance(by: .nanoseconds(1))
        _ = try storage.value(forKey: "1")
        #expect(storage.pendingAccessCount == 2)
        #expect(try fixture.storedAccessTime(of: "0") == 1_000_000_000_000)  // not written by the read

        let removed = try storage.trim(toCount: 3)
        #expect(removed == 3)
        #expect(try keys(storage, upTo: 6) == ["0", "1", "5"])
        #expect(storage.pendingAccessCount == 0)
        #expect(try storage.count() == 3)
        #expect(fixture.dataFiles().count == 3)
        #expect(try storage.trim(toCount: 3) == 0)
        #expect(try storage.trim(toCount: 0) == 3)
        #expect(try storage.count() == 0)
        #expect(fixture.dataFiles().isEmpty)
    }

    /// A damaged row recording an impossible size (here `Int64.min`) neither traps a trim's
    /// arithmetic nor stops it: the trim still brings the other entries under the limit.
    @Test func aRowWithANegativeSizeDoesNotTrapATrim() throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open(kind: .mixed(inlineThreshold: 4))
        try populate(storage, fixture, count: 10)
        let connection = try fixture.rawConnection()
        try connection.execute("UPDATE manifest SET size = -9223372036854775808 WHERE key = '0'")
        connection.close()
        try storage.trim(toSize: 30)
        #expect(try storage.count() <= 4)
        #expect(try storage.value(forKey: "9")?.value == testBytes(10, seed: 9))
    }

    @Test func trimToSizeRemovesOldestUntilUnderTheLimit() throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open(kind: .sqlite)
        try populate(storage, fixture, count: 5, size: 100)
        _ = try storage.value(forKey: "0")
        #expect(try storage.trim(toSize: 250) == 3)
        #expect(try keys(storage, upTo: 5) == ["0", "4"])
        #expect(try storage.totalSize() == 200)
        #expect(try storage.trim(toSize: 200) == 0)
        #expect(try storage.trim(toSize: 199) == 1)
        #expect(try keys(storage, upTo: 5) == ["0"])
    }

    @Test func trimToAgeRemovesEntriesWrittenThatLongAgo() throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open(kind: .file)
        try storage.setValue(testBytes(10), forKey: "old")
        fixture.clock.advance(by: .seconds(60))
        try storage.setValue(testBytes(10), forKey: "new")
        try storage.setValue(testBytes(10), forKey: "read")
        fixture.clock.advance(by: .seconds(30))
        try storage.setValue(testBytes(10), forKey: "rewritten")
        _ = try storage.value(forKey: "read")  // reads don't renew an entry's age
        fixture.clock.advance(by: .seconds(30))
        // now = 120 s: old was written 120 s ago, new and read 60 s ago, rewritten 30 s ago.
        #expect(try storage.trim(toAge: .seconds(90)) == 1)
        #expect(try keys(["old", "new", "read", "rewritten"], in: storage) == ["new", "read", "rewritten"])
        #expect(try storage.trim(toAge: .seconds(45)) == 2)
        #expect(try keys(["old", "new", "read", "rewritten"], in: storage) == ["rewritten"])
        #expect(fixture.dataFiles().count == 1)
    }

    /// Age trims find entries through the access index: those last read before the
    /// cutoff, and those read since but written before it. Small batches make the
    /// scan resume where the previous batch stopped.
    @Test(arguments: [UInt64(1), 2, 3])
    func trimToAgeMatchesAModelWhateverTheReads(seed: UInt64) throws {
        let fixture = try StorageFixture()
        var options = KVStorageOptions()
        options.trimBatchSize = 3
        let storage = try fixture.open(kind: .mixed(inlineThreshold: 8), options: options)
        var generator = SeededGenerator(seed: seed)
        var written: [String: Int] = [:]  // key -> second of its last write
        for second in 0..<200 {
            let key = "k\(Int.random(in: 0..<60, using: &generator))"
            if Bool.random(using: &generator) || written[key] == nil {
                try storage.setValue(testBytes(Int.random(in: 1...16, using: &generator)), forKey: key)
                written[key] = second
            } else {
                #expect(try storage.value(forKey: key) != nil)
            }
            if second % 50 == 49 { try storage.flushAccessTimes() }  // reads reach the index
            fixture.clock.advance(by: .seconds(1))
        }
        // now = 200 s; entries written at or before 120 s are 80 s old or more.
        let removed = try storage.trim(toAge: .seconds(80))
        let expected = Set(written.filter { $0.value > 120 }.keys)
        #expect(removed == written.count - expected.count)
        #expect(Set(try keys(Array(written.keys), in: storage)) == expected)
        #expect(try storage.count() == expected.count)
        #expect(try storage.checkConsistency().isClean)
    }

    func keys(_ candidates: [String], in storage: KVStorage) throws -> [String] {
        try candidates.filter { try storage.contains($0) }
    }

    @Test func negativeLimitsAreRejected() throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open()
        for operation in [
            { _ = try storage.trim(toCount: -1) },
            { _ = try storage.trim(toSize: -1) },
            { _ = try storage.trim(toAge: .seconds(-1)) },
            { _ = try storage.trimForFreeDiskSpace(limit: -1) },
        ] as [() throws -> Void] {
            #expect {
                try operation()
            } throws: { error in
                (error as? StashError)?.code == .invalidArgument
            }
        }
    }

    @Test func expiredEntriesAreMissesAndAreRemoved() throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open(kind: .mixed(inlineThreshold: 4))
        let now = fixture.clock.nanosecondsNow
        try storage.setValue(testBytes(10), forKey: "short", expiration: now + 10_000_000_000)
        try storage.setValue(testBytes(2), forKey: "inline", expiration: now + 10_000_000_000)
        try storage.setValue(testBytes(10), forKey: "long", expiration: now + 100_000_000_000)
        try storage.setValue(testBytes(10), forKey: "forever")
        #expect(try storage.value(forKey: "short") != nil)
        #expect(try storage.value(forKey: "short")?.expirationTime == now + 10_000_000_000)

        fixture.clock.advance(by: .seconds(10))  // exactly at expiry: expired
        #expect(try storage.value(forKey: "short") == nil)
        #expect(try !storage.contains("inline"))
        #expect(try storage.extendedData(forKey: "inline") == nil)
        #expect(try storage.count() == 3)  // the read removed "short"; "inline" awaits removal
        #expect(fixture.dataFiles().count == 2)

        #expect(try storage.removeExpired() == 1)
        #expect(try storage.count() == 2)
        #expect(try storage.removeExpired(now: now + 100_000_000_000) == 1)
        #expect(try keys(["short", "inline", "long", "forever"], in: storage) == ["forever"])
        #expect(fixture.dataFiles().count == 1)
    }

    @Test func anExpirationInThePastStoresAnExpiredEntry() throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open()
        try storage.setValue(testBytes(3), forKey: "k", expiration: fixture.clock.nanosecondsNow - 1)
        #expect(try storage.value(forKey: "k") == nil)
        #expect(try storage.count() == 0)
    }

    @Test func trimForFreeDiskSpaceRemovesWhatIsMissing() throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open(kind: .file)
        try populate(storage, fixture, count: 4, size: 100)
        #expect(try storage.trim(forFreeDiskSpace: 1000, available: 5000) == 0)
        #expect(try storage.trim(forFreeDiskSpace: 1000, available: 850) == 2)  // needs 150 more bytes
        #expect(try keys(storage, upTo: 4) == ["2", "3"])
        #expect(try storage.trimForFreeDiskSpace(limit: 0) == 0)  // real statvfs: always enough
        #expect(try storage.trimForFreeDiskSpace(limit: .max) == 2)  // never enough: empties the cache
        #expect(try storage.count() == 0)
    }

    @Test func removeAllReportsProgressAndMovesFilesToTheTrash() throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open(kind: .mixed(inlineThreshold: 50))
        for index in 0..<2500 {
            try storage.setValue(testBytes(index % 2 == 0 ? 10 : 100), forKey: "\(index)")
        }
        #expect(fixture.dataFiles().count == 1250)
        _ = try storage.value(forKey: "1")

        var reports: [(Int, Int)] = []
        try storage.removeAll { removed, total in reports.append((removed, total)) }
        #expect(reports.first.map { $0 == (0, 2500) } == true)
        #expect(reports.last.map { $0 == (2500, 2500) } == true)
        #expect(reports.count >= 4)  // at least three batches of at most 1024 rows
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.0 <= $1.0 })

        #expect(try storage.count() == 0)
        #expect(try storage.totalSize() == 0)
        #expect(storage.pendingAccessCount == 0)
        #expect(fixture.dataFiles().isEmpty)
        #expect(fixture.trashEntries().count == 1)

        #expect(storage.emptyTrash() == 1251)  // 1250 files and their directory
        #expect(fixture.trashEntries().isEmpty)

        try storage.setValue(testBytes(100), forKey: "after")
        #expect(try storage.value(forKey: "after")?.value == testBytes(100))
    }

    @Test func statsSummariseTheContents() throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open(kind: .mixed(inlineThreshold: 50))
        #expect(try storage.usage().count == 0)
        #expect(try storage.usage().oldestAccessTime == nil)
        let start = fixture.clock.nanosecondsNow
        try storage.setValue(testBytes(10), forKey: "a")
        fixture.clock.advance(by: .seconds(1))
        try storage.setValue(testBytes(100), forKey: "b")
        fixture.clock.advance(by: .seconds(1))
        _ = try storage.value(forKey: "a")
        let stats = try storage.usage()
        #expect(stats.count == 2)
        #expect(stats.totalSize == 110)
        #expect(stats.inlineCount == 1)
        #expect(stats.fileCount == 1)
        #expect(stats.oldestAccessTime == start + 1_000_000_000)
        #expect(stats.newestAccessTime == start + 2_000_000_000)  // the pending read was flushed
        #expect(stats.manifestBytes > 0)
    }

    @Test func accessTimesFlushByThemselvesPastTheThreshold() throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open(options: KVStorageOptions(accessFlushThreshold: 3))
        for key in ["a", "b", "c"] { try storage.setValue(Data([1]), forKey: key) }
        fixture.clock.advance(by: .seconds(5))
        _ = try storage.value(forKey: "a")
        _ = try storage.value(forKey: "b")
        #expect(storage.pendingAccessCount == 2)
        _ = try storage.value(forKey: "c")
        #expect(storage.pendingAccessCount == 0)
        #expect(try fixture.storedAccessTime(of: "a") == fixture.clock.nanosecondsNow)
    }

    @Test func closeFlushesAccessTimes() throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open()
        try storage.setValue(Data([1]), forKey: "a")
        fixture.clock.advance(by: .seconds(5))
        _ = try storage.value(forKey: "a")
        storage.close()
        #expect(try fixture.storedAccessTime(of: "a") == fixture.clock.nanosecondsNow)
    }
}
