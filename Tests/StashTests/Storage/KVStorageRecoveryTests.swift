import CSQLite
import Foundation
import Testing
@testable import Stash

@Suite(.timeLimit(.minutes(5))) struct KVStorageRecoveryTests {
    /// Fills a storage with enough inline entries to span many pages, then closes it.
    func populateAndClose(_ fixture: StorageFixture, count: Int = 300) throws {
        let storage = try fixture.open(kind: .mixed(inlineThreshold: 2000))
        for index in 0..<count {
            try storage.setValue(testBytes(index % 3 == 0 ? 3000 : 500, seed: UInt8(truncatingIfNeeded: index)), forKey: "key-\(index)")
        }
        storage.close()
        #expect(!FileManager.default.fileExists(atPath: fixture.manifestPath + "-wal")
                || ((try? readFile(fixture.manifestPath + "-wal"))?.isEmpty ?? true))
    }

    /// Asserts that the storage recovered: an error was logged, the damaged manifest
    /// was set aside, the cache is empty and it accepts and returns new values.
    func expectRecoveredAndWorking(_ storage: KVStorage, _ fixture: StorageFixture) throws {
        #expect(fixture.log.contains(level: .error, "set aside"))
        #expect(fixture.rootEntries().contains { $0.hasPrefix("manifest.sqlite.corrupt-") || $0.hasPrefix("manifest.sqlite.unsupported-") })
        #expect(try storage.value(forKey: "key-1") == nil)
        #expect(try storage.count() == 0)
        try storage.setValue(testBytes(5000), forKey: "fresh")
        try storage.setValue(testBytes(10), forKey: "small")
        #expect(try storage.value(forKey: "fresh")?.value == testBytes(5000))
        #expect(try storage.value(forKey: "small")?.value == testBytes(10))
        #expect(try storage.count() == 2)
        #expect(try storage.checkConsistency().isClean)
    }

    @Test func garbageManifestIsSetAsideOnOpen() throws {
        let fixture = try StorageFixture()
        try populateAndClose(fixture)
        try writeFile(fixture.manifestPath, Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7919) }))
        let storage = try fixture.open()
        #expect(fixture.dataFiles().isEmpty)  // the old files went to the trash with data/
        #expect(!fixture.trashEntries().isEmpty)
        try expectRecoveredAndWorking(storage, fixture)
    }

    @Test func textFileManifestIsSetAsideOnOpen() throws {
        let fixture = try StorageFixture()
        try FileManager.default.createDirectory(atPath: fixture.path, withIntermediateDirectories: true)
        try writeFile(fixture.manifestPath, Data("this is not a database, just some text\n".utf8))
        let storage = try fixture.open()
        try expectRecoveredAndWorking(storage, fixture)
    }

    @Test(arguments: [50, 4096 + 100, 3 * 4096])
    func truncatedManifestIsRecovered(length: Int) throws {
        let fixture = try StorageFixture()
        try populateAndClose(fixture)
        let bytes = try readFile(fixture.manifestPath)
        #expect(bytes.count > length)
        try writeFile(fixture.manifestPath, bytes.prefix(length))
        // Damage found on open, or by the first operation to reach a missing page:
        // either way the storage ends up working and has logged an error.
        let storage = try fixture.open()
        _ = try storage.value(forKey: "key-299")
        _ = try storage.checkConsistency()
        try expectRecoveredAndWorking(storage, fixture)
    }

    @Test func corruptionFoundDuringAnOperationIsRecovered() throws {
        let fixture = try StorageFixture()
        try populateAndClose(fixture)
        var bytes = try readFile(fixture.manifestPath)
        // Keep the first half (header, schema, totals, the tree's upper pages) intact;
        // scramble the second half, which holds rows.
        let pageSize = 4096
        for index in (bytes.count / 2 / pageSize * pageSize)..<bytes.count {
            bytes[index] = UInt8(truncatingIfNeeded: index &* 131)
        }
        try writeFile(fixture.manifestPath, bytes)

        let storage = try fixture.open()
        #expect(!fixture.log.contains(level: .error, "set aside"))  // opening found nothing wrong
        var misses = 0
        for index in 0..<300 where try storage.value(forKey: "key-\(index)") == nil {
            misses += 1  // damage is a miss, never a crash or a thrown error
        }
        #expect(misses > 0)
        try expectRecoveredAndWorking(storage, fixture)
    }

    @Test func aWriteThatFindsCorruptionThrowsCorruptedAndTheNextWriteWorks() throws {
        let fixture = try StorageFixture()
        try populateAndClose(fixture)
        var bytes = try readFile(fixture.manifestPath)
        for index in 4096..<bytes.count {
            bytes[index] = 0xFF
        }
        try writeFile(fixture.manifestPath, bytes)
        let storage = try fixture.open()
        let firstWrite = Result { () throws(StashError) in
            try storage.setValue(testBytes(10), forKey: "key-7")
        }
        if case .failure(let error) = firstWrite {
            #expect(error.code == .corrupted)
            #expect((error.cause as? SQLiteError)?.isCorruption == true)
            try storage.setValue(testBytes(10), forKey: "key-7")
        } else {
            // Acceptable only if the write needed no damaged page: then a read finds the damage.
            _ = try storage.value(forKey: "key-1")
        }
        #expect(try storage.value(forKey: "key-7")?.value == testBytes(10))
        #expect(fixture.log.contains(level: .error, "set aside"))
    }

    /// A manifest of schema version 1 (separate indexes on the two times) is
    /// migrated in place on open: entries, totals and files are kept.
    @Test func schemaVersion1IsMigrated() throws {
        let fixture = try StorageFixture()
        try populateAndClose(fixture, count: 30)
        do {
            let connection = try fixture.rawConnection()
            try connection.execute("""
                DROP INDEX manifest_last_access_time;
                CREATE INDEX manifest_last_access_time ON manifest(last_access_time);
                CREATE INDEX manifest_modification_time ON manifest(modification_time);
                PRAGMA user_version = 1;
                """)
            connection.close()
        }
        let storage = try fixture.open(kind: .mixed(inlineThreshold: 2000))
        #expect(try storage.count() == 30)
        for index in 0..<30 {
            let expected = testBytes(index % 3 == 0 ? 3000 : 500, seed: UInt8(truncatingIfNeeded: index))
            #expect(try storage.value(forKey: "key-\(index)")?.value == expected)
        }
        #expect(try storage.checkConsistency().isClean)
        storage.close()

        let connection = try fixture.rawConnection()
        #expect(try connection.scalarInt64("PRAGMA user_version") == Manifest.schemaVersion)
        let indexes = try connection.withStatement(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'manifest' AND sql IS NOT NULL ORDER BY name"
        ) { statement throws(SQLiteError) in
            var names: [String] = []
            while try statement.step() == .row { names.append(statement.text(at: 0) ?? "") }
            return names
        }
        #expect(indexes == ["manifest_expiration_time", "manifest_last_access_time"])
        #expect(fixture.log.messages(at: .warning).isEmpty && fixture.log.messages(at: .error).isEmpty)
    }

    @Test func schemaVersion2IsMigrated() throws {
        let fixture = try StorageFixture()
        try populateAndClose(fixture, count: 30)
        do {
            // Version 2 kept the totals with triggers.
            let connection = try fixture.rawConnection()
            try connection.execute("""
                CREATE TRIGGER manifest_after_insert AFTER INSERT ON manifest BEGIN
                    UPDATE manifest_totals SET count = count + 1, size = size + NEW.size,
                        file_count = file_count + (NEW.filename IS NOT NULL) WHERE id = 0;
                END;
                CREATE TRIGGER manifest_after_delete AFTER DELETE ON manifest BEGIN
                    UPDATE manifest_totals SET count = count - 1, size = size - OLD.size,
                        file_count = file_count - (OLD.filename IS NOT NULL) WHERE id = 0;
                END;
                CREATE TRIGGER manifest_after_update AFTER UPDATE OF size, filename ON manifest BEGIN
                    UPDATE manifest_totals SET size = size - OLD.size + NEW.size,
                        file_count = file_count - (OLD.filename IS NOT NULL) + (NEW.filename IS NOT NULL) WHERE id = 0;
                END;
                PRAGMA user_version = 2;
                """)
            connection.close()
        }
        let storage = try fixture.open(kind: .mixed(inlineThreshold: 2000))
        #expect(try storage.count() == 30)
        // Were a trigger left, every change below would be counted twice: the
        // count would end at 32 and the size off by the same changes again.
        try storage.setValue(testBytes(100), forKey: "new")
        try storage.setValue(testBytes(200), forKey: "newer")
        try storage.setValue(testBytes(3000), forKey: "key-1")
        #expect(try storage.removeValue(forKey: "key-2"))
        #expect(try storage.count() == 31)
        let connection = try fixture.rawConnection()
        #expect(try storage.totalSize() == Int(try #require(try connection.scalarInt64("SELECT sum(size) FROM manifest"))))
        #expect(try storage.checkConsistency().isClean)
        storage.close()

        #expect(try connection.scalarInt64("PRAGMA user_version") == Manifest.schemaVersion)
        #expect(try connection.scalarInt64("SELECT count(*) FROM sqlite_master WHERE type = 'trigger'") == 0)
    }

    @Test func newerSchemaVersionIsSetAside() throws {
        let fixture = try StorageFixture()
        try populateAndClose(fixture, count: 3)
        do {
            let connection = try fixture.rawConnection()
            try connection.execute("PRAGMA user_version = 99")
        }
        let storage = try fixture.open()
        #expect(fixture.log.contains(level: .error, "set aside"))
        #expect(fixture.rootEntries().contains { $0.hasPrefix("manifest.sqlite.unsupported-") })
        #expect(try storage.count() == 0)
        try storage.setValue(Data([1]), forKey: "x")
        #expect(try storage.value(forKey: "x")?.value == Data([1]))
    }

    @Test func onlyTheLatestDamagedManifestIsKept() throws {
        let fixture = try StorageFixture()
        for round in 0..<3 {
            try FileManager.default.createDirectory(atPath: fixture.path, withIntermediateDirectories: true)
            try writeFile(fixture.manifestPath, Data(repeating: UInt8(round + 1), count: 8192))
            let storage = try fixture.open()
            try storage.setValue(Data([1]), forKey: "k")
            storage.close()
        }
        let asides = fixture.rootEntries().filter { $0.hasPrefix("manifest.sqlite.corrupt-") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }
        #expect(asides.count == 1)
    }

    @Test(arguments: [DiskStorageKind.file, .mixed(inlineThreshold: 10)])
    func missingOrTruncatedFileIsAMissAndTheEntryIsRemoved(kind: DiskStorageKind) throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open(kind: kind)
        try storage.setValue(testBytes(100), forKey: "deleted")
        try storage.setValue(testBytes(100), forKey: "truncated")
        try storage.setValue(testBytes(100), forKey: "grown")
        let deleted = try #require(try fixture.filename(of: "deleted"))
        let truncated = try #require(try fixture.filename(of: "truncated"))
        let grown = try #require(try fixture.filename(of: "grown"))
        try FileManager.default.removeItem(atPath: "\(fixture.dataPath)/\(deleted)")
        try writeFile("\(fixture.dataPath)/\(truncated)", testBytes(60))
        try writeFile("\(fixture.dataPath)/\(grown)", testBytes(160))

        for key in ["deleted", "truncated", "grown"] {
            #expect(try storage.value(forKey: key) == nil)
            #expect(try !storage.contains(key))
        }
        #expect(try storage.count() == 0)
        #expect(fixture.dataFiles().isEmpty)
        #expect(fixture.log.messages(at: .warning).filter { $0.contains("damaged") }.count == 3)
    }

    /// A damaged row recording an impossible or wrong size for a file value is a
    /// miss and is removed: never a crash, and never an allocation of a huge size
    /// (past `sizeCheckedBeforeAllocating` the file's size is checked first; the
    /// address sanitizer aborts on an allocation of 2^50 bytes).
    @Test func fileRowWithAnImpossibleSizeIsAMissAndTheEntryIsRemoved() throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open(kind: .file)
        let sizes: [Int64] = [-5, Int64.max, 1 << 50, 1 << 20]
        let connection = try fixture.rawConnection()
        for (index, size) in sizes.enumerated() {
            try storage.setValue(testBytes(100), forKey: "k\(index)")
            try connection.execute("UPDATE manifest SET size = \(size) WHERE key = 'k\(index)'")
        }
        for index in sizes.indices {
            #expect(try storage.value(forKey: "k\(index)") == nil, "size \(sizes[index])")
            #expect(try !storage.contains("k\(index)"), "size \(sizes[index])")
        }
        #expect(fixture.log.messages(at: .warning).filter { $0.contains("damaged") }.count == sizes.count)
    }

    /// Reads check a file's type and size without `fstat`: a directory fails the
    /// read, a FIFO reads as empty or would block, and neither hangs the read.
    @Test func directoryOrFIFOInAFilesPlaceIsAMissAndTheEntryIsRemoved() throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open(kind: .file)
        for key in ["directory", "fifo", "fifo with a writer"] {
            try storage.setValue(testBytes(100), forKey: key)
            let path = "\(fixture.dataPath)/\(try #require(try fixture.filename(of: key)))"
            try FileManager.default.removeItem(atPath: path)
            if key == "directory" {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            } else {
                #expect(mkfifo(path, 0o600) == 0)
            }
        }
        // Holding the FIFO open for reading and writing makes it have a writer
        // without blocking here: a non-blocking read of it fails with EAGAIN.
        // Close-on-exec, like every descriptor the tests open: CLI tests spawn
        // children meanwhile.
        let writer = open(
            "\(fixture.dataPath)/\(try #require(try fixture.filename(of: "fifo with a writer")))", O_RDWR | O_CLOEXEC)
        #expect(writer >= 0)
        defer { close(writer) }

        for key in ["directory", "fifo", "fifo with a writer"] {
            #expect(try storage.value(forKey: key) == nil, "\(key)")
            #expect(try !storage.contains(key), "\(key)")
        }
        #expect(try storage.count() == 0)
        #expect(fixture.log.messages(at: .warning).filter { $0.contains("damaged") }.count == 3)
    }

    @Test func dataDirectoryReplacedByAPlainFileIsRepaired() throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open(kind: .file)
        try storage.setValue(testBytes(100), forKey: "a")
        try FileManager.default.removeItem(atPath: fixture.dataPath)
        try writeFile(fixture.dataPath, Data("not a directory".utf8))

        #expect(try storage.value(forKey: "a") == nil)
        try storage.setValue(testBytes(100), forKey: "b")
        #expect(try storage.value(forKey: "b")?.value == testBytes(100))
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: fixture.dataPath, isDirectory: &isDirectory) && isDirectory.boolValue)
        #expect(fixture.log.contains(level: .error, "data/ is not a directory"))
    }

    @Test func dataDirectoryReplacedByASymlinkIsNeverFollowed() throws {
        let fixture = try StorageFixture()
        let outside = fixture.directory.appending("outside")
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        let storage = try fixture.open(kind: .file)
        try storage.setValue(testBytes(100), forKey: "a")
        let name = try #require(try fixture.filename(of: "a"))
        // An attacker moves data/ away and points data at a directory holding a file of that name.
        try writeFile("\(outside)/\(name)", Data("precious".utf8))
        try FileManager.default.removeItem(atPath: fixture.dataPath)
        try FileManager.default.createSymbolicLink(atPath: fixture.dataPath, withDestinationPath: outside)

        #expect(try storage.value(forKey: "a") == nil)
        #expect(try storage.removeValue(forKey: "a") == false)
        try storage.setValue(testBytes(10), forKey: "b")
        #expect(try storage.value(forKey: "b")?.value == testBytes(10))
        #expect(try readFile("\(outside)/\(name)") == Data("precious".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside) == [name])
        _ = storage.emptyTrash()  // the moved-aside link is unlinked, its target kept
        #expect(try readFile("\(outside)/\(name)") == Data("precious".utf8))
    }

    @Test func dataFileReplacedBySymlinkIsNotFollowedOnReadOrDelete() throws {
        let fixture = try StorageFixture()
        let outside = fixture.directory.appending("outside.txt")
        try writeFile(outside, testBytes(100, seed: 9))  // same size as the value, different bytes
        let storage = try fixture.open(kind: .file)
        try storage.setValue(testBytes(100), forKey: "read")
        try storage.setValue(testBytes(100), forKey: "delete")
        for key in ["read", "delete"] {
            let name = try #require(try fixture.filename(of: key))
            try FileManager.default.removeItem(atPath: "\(fixture.dataPath)/\(name)")
            try FileManager.default.createSymbolicLink(atPath: "\(fixture.dataPath)/\(name)", withDestinationPath: outside)
        }

        #expect(try storage.value(forKey: "read") == nil)  // not the outside file's bytes
        #expect(try storage.removeValue(forKey: "delete"))
        #expect(fixture.dataFiles().isEmpty)  // the links are gone
        #expect(try readFile(outside) == testBytes(100, seed: 9))  // the target is untouched
        #expect(fixture.log.contains(level: .warning, "damaged"))
    }

    @Test func emptyingTheTrashNeverFollowsLinks() throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open()
        let outsideDirectory = fixture.directory.appending("outside-dir")
        try FileManager.default.createDirectory(atPath: outsideDirectory, withIntermediateDirectories: true)
        try writeFile("\(outsideDirectory)/keep", Data([1]))
        try writeFile(fixture.directory.appending("outside-file"), Data([2]))
        let nested = "\(fixture.trashPath)/batch/deeper"
        try FileManager.default.createDirectory(atPath: nested, withIntermediateDirectories: true)
        try writeFile("\(nested)/junk", Data([3]))
        try FileManager.default.createSymbolicLink(atPath: "\(nested)/dir-link", withDestinationPath: outsideDirectory)
        try FileManager.default.createSymbolicLink(atPath: "\(fixture.trashPath)/file-link", withDestinationPath: fixture.directory.appending("outside-file"))

        #expect(storage.emptyTrash() == 5)
        #expect(fixture.trashEntries().isEmpty)
        #expect(try readFile("\(outsideDirectory)/keep") == Data([1]))
        #expect(try readFile(fixture.directory.appending("outside-file")) == Data([2]))
    }

    @Test func aBusyDatabaseFailsTheOperationAndDeletesNothing() throws {
        let fixture = try StorageFixture()
        let storage = try fixture.open(kind: .mixed(inlineThreshold: 10), options: KVStorageOptions(busyTimeout: .milliseconds(10)))
        try storage.setValue(testBytes(5), forKey: "inline")
        try storage.setValue(testBytes(50), forKey: "file")

        let holder = try fixture.rawConnection()
        try holder.execute("BEGIN EXCLUSIVE")
        for operation in [
            { try storage.setValue(testBytes(50), forKey: "new") },
            { _ = try storage.removeValue(forKey: "file") },
            { _ = try storage.trim(toCount: 0) },
            { try storage.removeAll() },
        ] as [() throws -> Void] {
            #expect {
                try operation()
            } throws: { error in
                let error = error as? StashError
                return error?.code == .databaseFailed && (error?.cause as? SQLiteError)?.resultCode == SQLITE_BUSY
            }
        }
        try holder.execute("ROLLBACK")

        #expect(try storage.value(forKey: "inline")?.value == testBytes(5))
        #expect(try storage.value(forKey: "file")?.value == testBytes(50))
        #expect(try storage.value(forKey: "new") == nil)
        #expect(fixture.dataFiles().count == 1)  // the failed write's file was deleted
        #expect(!fixture.log.contains(level: .error, "set aside"))
    }
}
