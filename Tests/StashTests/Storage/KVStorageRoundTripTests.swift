import Foundation
import Testing
@testable import Stash

@Suite(.timeLimit(.minutes(5))) struct KVStorageRoundTripTests {
    static let kinds: [DiskStorageKind] = [.sqlite, .file, .mixed(inlineThreshold: 100), .default]

    @Test(arguments: kinds)
    func valuesRoundTripForEachKind(kind: DiskStorageKind) throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open(kind: kind)
        let sizes = [0, 1, 99, 100, 101, 5000, 70_000]
        for (index, size) in sizes.enumerated() {
            try storage.setValue(testBytes(size, seed: UInt8(index)), forKey: "key-\(index)")
        }
        for (index, size) in sizes.enumerated() {
            let item = try #require(try storage.value(forKey: "key-\(index)"))
            #expect(item.value == testBytes(size, seed: UInt8(index)))
            #expect(item.size == size)
            #expect(item.isInline == kind.storesInline(size: size))
        }
        #expect(try storage.count() == sizes.count)
        #expect(try storage.totalSize() == sizes.reduce(0, +))
        let expectedFiles = sizes.filter { !kind.storesInline(size: $0) }.count
        #expect(fixture.dataFiles().count == expectedFiles)
        #expect(try storage.value(forKey: "absent") == nil)
    }

    @Test func inlineThresholdBoundaries() throws {
        let fixture = try StorageFixture()
        let threshold = DiskStorageKind.defaultInlineThreshold
        let storage = try fixture.open(kind: .default)
        try storage.setValue(testBytes(threshold - 1), forKey: "below")
        try storage.setValue(testBytes(threshold), forKey: "at")
        try storage.setValue(testBytes(threshold + 1), forKey: "above")
        #expect(try storage.value(forKey: "below")?.isInline == true)
        #expect(try storage.value(forKey: "at")?.isInline == true)
        #expect(try storage.value(forKey: "above")?.isInline == false)
        #expect(try fixture.filename(of: "below") == nil)
        #expect(try fixture.filename(of: "at") == nil)
        let file = try #require(try fixture.filename(of: "above"))
        #expect(fixture.dataFiles() == [file])
        #expect(try storage.value(forKey: "above")?.value == testBytes(threshold + 1))
    }

    @Test func aBatchStoresEveryValidWriteInOrderAndFailsInvalidOnesAlone() throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open(kind: .mixed(inlineThreshold: 10))
        try storage.setValue(testBytes(40, seed: 9), forKey: "old")
        let oldFile = try #require(try fixture.filename(of: "old"))
        let failures = try storage.setValues([
            KVStorage.Write(key: "a", value: testBytes(5, seed: 1)),
            KVStorage.Write(key: "", value: testBytes(5)),
            KVStorage.Write(key: "f", value: testBytes(50, seed: 2)),
            // The same key again: the last write wins, the first one's file is deleted.
            KVStorage.Write(key: "f", value: testBytes(60, seed: 3)),
            KVStorage.Write(key: "old", value: testBytes(3, seed: 4)),
        ])
        #expect(failures.map { $0?.code } == [nil, .invalidKey, nil, nil, nil])
        #expect(try storage.value(forKey: "a")?.value == testBytes(5, seed: 1))
        #expect(try storage.value(forKey: "f")?.value == testBytes(60, seed: 3))
        #expect(try storage.value(forKey: "old")?.value == testBytes(3, seed: 4))
        let file = try #require(try fixture.filename(of: "f"))
        #expect(file != oldFile)
        #expect(fixture.dataFiles() == [file])
        #expect(try storage.count() == 3)
        #expect(try storage.totalSize() == 68)
        #expect(try storage.checkConsistency().isClean)
    }

    @Test func aBatchOfInvalidWritesTouchesNothing() throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open()
        let failures = try storage.setValues([KVStorage.Write(key: "", value: testBytes(5))])
        #expect(failures.map { $0?.code } == [.invalidKey])
        #expect(try storage.count() == 0)
    }

    @Test func overwriteReplacesValueAndDeletesTheOldFileAfterCommit() throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open(kind: .mixed(inlineThreshold: 10))
        try storage.setValue(testBytes(50, seed: 1), forKey: "k")
        let firstFile = try #require(try fixture.filename(of: "k"))
        try storage.setValue(testBytes(60, seed: 2), forKey: "k")
        let secondFile = try #require(try fixture.filename(of: "k"))
        #expect(firstFile != secondFile)
        #expect(fixture.dataFiles() == [secondFile])
        try storage.setValue(testBytes(5, seed: 3), forKey: "k")  // now inline
        #expect(fixture.dataFiles().isEmpty)
        #expect(try storage.value(forKey: "k")?.value == testBytes(5, seed: 3))
        #expect(try storage.count() == 1)
        #expect(try storage.totalSize() == 5)
    }

    @Test func fileNamesAreRandomAndNeverDerivedFromKeys() throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open(kind: .file)
        try storage.setValue(testBytes(10), forKey: "report.pdf")
        try storage.setValue(testBytes(10), forKey: "report.pdf2")
        let names = fixture.dataFiles()
        #expect(names.count == 2)
        for name in names {
            #expect(name.count == 32)
            #expect(name.allSatisfy { $0.isHexDigit })
            #expect(!name.contains("report"))
        }
    }

    @Test func extendedDataIsStoredBesideTheValue() throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open(kind: .mixed(inlineThreshold: 10))
        let extended = Data("metadata".utf8)
        try storage.setValue(testBytes(5), forKey: "inline", extendedData: extended)
        try storage.setValue(testBytes(50), forKey: "file", extendedData: Data())
        try storage.setValue(testBytes(5), forKey: "none")
        #expect(try storage.extendedData(forKey: "inline") == extended)
        #expect(try storage.extendedData(forKey: "file") == Data())
        #expect(try storage.extendedData(forKey: "none") == nil)
        #expect(try storage.extendedData(forKey: "absent") == nil)
        try storage.setValue(testBytes(5), forKey: "inline")  // replacing drops it
        #expect(try storage.extendedData(forKey: "inline") == nil)
    }

    @Test func emptyKeyIsRejected() throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open()
        for operation in [
            { try storage.setValue(Data([1]), forKey: "") },
            { _ = try storage.value(forKey: "") },
            { _ = try storage.removeValue(forKey: "") },
            { _ = try storage.contains("") },
        ] as [() throws -> Void] {
            #expect {
                try operation()
            } throws: { error in
                (error as? StashError)?.code == .invalidKey
            }
        }
        #expect(try storage.count() == 0)
    }

    @Test(arguments: [DiskStorageKind.sqlite, .file])
    func unusualKeysRoundTrip(kind: DiskStorageKind) throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open(kind: kind)
        let keys = [
            "../x", "a/b", "/", ".", "..", "a\u{0}b", "a\u{0}c", "\u{0}", "line\nbreak", "tab\tcr\r",
            "日本語のキー", "emoji 👩‍👩‍👧‍👦", "e\u{301}", "é", String(repeating: "k", count: 1_000_000),
            "'; DROP TABLE manifest; --", "%s%n", " ",
        ]
        for (index, key) in keys.enumerated() {
            try storage.setValue(testBytes(index + 1, seed: UInt8(index)), forKey: key)
        }
        #expect(try storage.count() == keys.count)
        for (index, key) in keys.enumerated() {
            #expect(try storage.value(forKey: key)?.value == testBytes(index + 1, seed: UInt8(index)), "key \(index)")
        }
        // Only the storage's own entries exist: nothing was created from a key.
        #expect(Set(fixture.rootEntries()).isSubset(of: ["data", "trash", "manifest.sqlite", "manifest.sqlite-wal", "manifest.sqlite-shm"]))
        #expect(try storage.removeValue(forKey: "a\u{0}b"))
        #expect(try storage.value(forKey: "a\u{0}b") == nil)
        #expect(try storage.value(forKey: "a\u{0}c") != nil)
    }

    @Test func containsAndRemove() throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open(kind: .mixed(inlineThreshold: 10))
        try storage.setValue(testBytes(50), forKey: "file")
        try storage.setValue(testBytes(5), forKey: "inline")
        #expect(try storage.contains("file"))
        #expect(try storage.contains("inline"))
        #expect(try !storage.contains("absent"))
        #expect(try storage.removeValue(forKey: "file"))
        #expect(try !storage.removeValue(forKey: "file"))
        #expect(fixture.dataFiles().isEmpty)
        #expect(try storage.removeValue(forKey: "inline"))
        #expect(try storage.count() == 0)
        #expect(try storage.totalSize() == 0)
    }

    @Test func valuesPersistAcrossReopen() throws {
        let fixture = try StorageFixture()
        do {
            let storage = try fixture.open(kind: .mixed(inlineThreshold: 10))
            try storage.setValue(testBytes(5), forKey: "inline", expiration: 9_000_000_000_000, extendedData: Data([7]))
            try storage.setValue(testBytes(500), forKey: "file")
            storage.close()
        }
        // Reopened with another kind: existing entries are read where they are.
        let storage = try fixture.open(kind: .sqlite)
        let inline = try #require(try storage.value(forKey: "inline"))
        #expect(inline.value == testBytes(5))
        #expect(inline.expirationTime == 9_000_000_000_000)
        #expect(try storage.extendedData(forKey: "inline") == Data([7]))
        #expect(try storage.value(forKey: "file")?.value == testBytes(500))
        #expect(try storage.count() == 2)
        #expect(try storage.totalSize() == 505)
    }

    @Test func closedStorageThrowsClosed() throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open()
        try storage.setValue(Data([1]), forKey: "a")
        storage.close()
        storage.close()
        #expect {
            _ = try storage.value(forKey: "a")
        } throws: { error in
            (error as? StashError)?.code == .closed
        }
    }

    @Test func directoriesAndFilesArePrivate() throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open(kind: .file)
        try storage.setValue(testBytes(10), forKey: "k")
        let file = try #require(try fixture.filename(of: "k"))
        #expect(permissions(of: fixture.path) == 0o700)
        #expect(permissions(of: fixture.dataPath) == 0o700)
        #expect(permissions(of: fixture.trashPath) == 0o700)
        #expect(permissions(of: fixture.manifestPath) == 0o600)
        #expect(permissions(of: fixture.manifestPath + "-wal") == 0o600)
        #expect(permissions(of: "\(fixture.dataPath)/\(file)") == 0o600)
    }

    #if os(Linux)
    /// Reads open value files with `O_NOATIME`: a file whose access time is older
    /// than its modification time, which `relatime` would update on a read, keeps it.
    @Test func readsLeaveFileAccessTimesAlone() throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open(kind: .file)
        try storage.setValue(testBytes(10), forKey: "k")
        let file = "\(fixture.dataPath)/\(try #require(try fixture.filename(of: "k")))"
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let times = [timespec(tv_sec: 1_000_000, tv_nsec: 0), now]  // accessed in 1970, modified now
        #expect(utimensat(AT_FDCWD, file, times, AT_SYMLINK_NOFOLLOW) == 0)

        #expect(try storage.value(forKey: "k")?.value == testBytes(10))

        var info = stat()
        #expect(lstat(file, &info) == 0)
        #expect(info.st_atim.tv_sec == 1_000_000)
    }
    #endif

    @Test func invalidConfigurationIsRejected() throws {
        let fixture = try StorageFixture()
        // A negative inline threshold is a negative limit: 0, with a warning.
        let clamped = try fixture.open(kind: .mixed(inlineThreshold: -1))
        #expect(clamped.kind == .mixed(inlineThreshold: 0))
        #expect(fixture.log.contains(level: .warning, "inline threshold must not be negative"))
        clamped.close()
        try writeFile(fixture.directory.appending("plain"), Data([1]))
        #expect {
            _ = try KVStorage(directory: fixture.directory.appending("plain"), clock: fixture.clock, logger: fixture.log.logger)
        } throws: { error in
            (error as? StashError)?.code == .directoryUnusable
        }
    }
}
