import Foundation
import Stash
import Testing

/// End-to-end tests of the `stash` executable: each runs the built binary as a
/// subprocess on a fresh temporary directory and checks its output and exit status.
///
/// Exit statuses: 0 success, 1 not found, 2 bad usage, 3 no cache, 4 failure.
@Suite(.timeLimit(.minutes(5))) struct CLITests {
    /// A value size above the default inline threshold, so stored as a file; a
    /// round number, so that the stats tests can spell out totals.
    static let fileSize = 40_000

    // MARK: - set and get

    @Test func binaryValuesRoundTripThroughStandardInput() throws {
        let fixture = try CLIFixture()
        // Every byte value, NULs and line breaks included, and no final line break.
        var bytes = Data((0...255).map { UInt8($0) })
        bytes.append(contentsOf: [0, 13, 10, 0, 255])

        let set = try fixture.stash("set", "$CACHE", "bin", stdin: bytes)
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.output == "stored \"bin\": 261 bytes\n")

        let get = try fixture.stash("get", "$CACHE", "bin")
        #expect(get.status == 0, "\(get.stderr)")
        #expect(get.stdout == bytes, "get writes the bytes exactly, without a line break")
        #expect(get.stderr.isEmpty)
    }

    @Test func largeValuesRoundTripFromAFileAndFromStandardInput() throws {
        let fixture = try CLIFixture()
        var generator = SeededGenerator(seed: 7)
        let bytes = Data((0..<100_000).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let file = fixture.temporary.appending("input.bin")
        try bytes.write(to: URL(fileURLWithPath: file))

        #expect(try fixture.stash("set", "$CACHE", "from-file", file).status == 0)
        #expect(try fixture.stash("set", "$CACHE", "from-stdin", "-", stdin: bytes).status == 0)
        #expect(try fixture.dataFiles().count == 2, "values above the inline threshold get files of their own")
        #expect(try fixture.stash("get", "$CACHE", "from-file").stdout == bytes)
        #expect(try fixture.stash("get", "$CACHE", "from-stdin").stdout == bytes)
    }

    @Test func setReplacesAValueAndAcceptsATimeToLive() throws {
        let fixture = try CLIFixture()
        #expect(try fixture.stash("set", "$CACHE", "k", stdin: Data("one".utf8)).status == 0)
        let set = try fixture.stash("set", "$CACHE", "k", "--ttl", "1h", stdin: Data("two".utf8))
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.output == "stored \"k\": 3 bytes, expires in 1h\n")
        #expect(try fixture.stash("get", "$CACHE", "k").output == "two")
    }

    @Test func anEmptyValueIsStored() throws {
        let fixture = try CLIFixture()
        #expect(try fixture.stash("set", "$CACHE", "empty").status == 0)
        let get = try fixture.stash("get", "$CACHE", "empty")
        #expect(get.status == 0)
        #expect(get.stdout.isEmpty)
    }

    @Test func getOfAMissingKeyExitsWithOne() throws {
        let fixture = try CLIFixture()
        try fixture.seed(count: 1)
        let get = try fixture.stash("get", "$CACHE", "missing")
        #expect(get.status == 1)
        #expect(get.stdout.isEmpty)
        #expect(get.errorLines == ["stash: not found: no value for key \"missing\" in \(fixture.cache)"])
    }

    // MARK: - rm

    @Test func rmRemovesOneValueAndReportsAMissingKey() throws {
        let fixture = try CLIFixture()
        try fixture.seed(count: 2)
        let removed = try fixture.stash("rm", "$CACHE", "key-0")
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(removed.output == "removed \"key-0\"\n")
        #expect(try fixture.stash("get", "$CACHE", "key-0").status == 1)
        #expect(try fixture.stash("get", "$CACHE", "key-1").status == 0, "the other value stays")

        let again = try fixture.stash("rm", "$CACHE", "key-0")
        #expect(again.status == 1)
        #expect(again.errorLines.count == 1)
        #expect(again.stderr.contains("no value for key \"key-0\""))
    }

    // MARK: - Directories

    @Test(arguments: [
        ["get", "$CACHE", "k"], ["rm", "$CACHE", "k"], ["stats", "$CACHE"], ["stats", "--json", "$CACHE"],
        ["trim", "$CACHE", "--count", "1"], ["clear", "$CACHE"], ["verify", "$CACHE"],
    ])
    func aMissingDirectoryIsRefusedAndNotCreated(arguments: [String]) throws {
        let fixture = try CLIFixture()
        let result = try StashTool.run(arguments.map { $0 == "$CACHE" ? fixture.cache : $0 })
        #expect(result.status == 3)
        #expect(result.stdout.isEmpty)
        #expect(result.errorLines == ["stash: error: no such directory: \(fixture.cache)"])
        #expect(!FileManager.default.fileExists(atPath: fixture.cache), "nothing is created")
    }

    @Test func getOnSlashNonexistentCreatesNothing() throws {
        try #require(!FileManager.default.fileExists(atPath: "/nonexistent"))
        let result = try StashTool.run(["get", "/nonexistent", "k"])
        #expect(result.status == 3)
        #expect(result.errorLines == ["stash: error: no such directory: /nonexistent"])
        #expect(!FileManager.default.fileExists(atPath: "/nonexistent"))
    }

    @Test(arguments: [
        ["get", "$CACHE", "k"], ["rm", "$CACHE", "k"], ["stats", "$CACHE"], ["trim", "$CACHE", "--count", "1"],
        ["clear", "$CACHE"], ["verify", "$CACHE"],
    ])
    func aDirectoryThatIsNotACacheIsRefused(arguments: [String]) throws {
        let fixture = try CLIFixture()
        try FileManager.default.createDirectory(atPath: fixture.cache, withIntermediateDirectories: false)
        let result = try StashTool.run(arguments.map { $0 == "$CACHE" ? fixture.cache : $0 })
        #expect(result.status == 3)
        #expect(result.errorLines == ["stash: error: \(fixture.cache) is not a Stash cache (it has no manifest.sqlite)"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.cache).isEmpty, "nothing is created")
    }

    @Test func setRefusesANonEmptyDirectoryThatIsNotACache() throws {
        let fixture = try CLIFixture()
        try FileManager.default.createDirectory(atPath: fixture.cache, withIntermediateDirectories: false)
        #expect(FileManager.default.createFile(atPath: "\(fixture.cache)/notes.txt", contents: Data("mine".utf8)))
        let result = try fixture.stash("set", "$CACHE", "k", stdin: Data("v".utf8))
        #expect(result.status == 3)
        #expect(result.errorLines.count == 1)
        #expect(result.stderr.contains("is not a Stash cache"))
        #expect(result.stderr.contains("refusing to create a cache in it"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.cache) == ["notes.txt"])
    }

    @Test func setCreatesACacheInAMissingOrEmptyDirectory() throws {
        let fixture = try CLIFixture()
        let nested = fixture.temporary.appending("a/b/cache")
        #expect(try StashTool.run(["set", nested, "k"], stdin: Data("v".utf8)).status == 0)
        #expect(FileManager.default.fileExists(atPath: "\(nested)/manifest.sqlite"))

        try FileManager.default.createDirectory(atPath: fixture.cache, withIntermediateDirectories: false)
        #expect(try fixture.stash("set", "$CACHE", "k", stdin: Data("v".utf8)).status == 0)
        #expect(try fixture.stash("get", "$CACHE", "k").output == "v")
    }

    @Test func aFileIsNotADirectory() throws {
        let fixture = try CLIFixture()
        #expect(FileManager.default.createFile(atPath: fixture.cache, contents: Data()))
        for arguments in [["get", fixture.cache, "k"], ["set", fixture.cache, "k"]] {
            let result = try StashTool.run(arguments)
            #expect(result.status == 3)
            #expect(result.errorLines == ["stash: error: not a directory: \(fixture.cache)"])
        }
    }

    // MARK: - Usage errors

    @Test(arguments: [
        ["get", "$CACHE", ""], ["rm", "$CACHE", ""], ["set", "$CACHE", ""],
    ])
    func anEmptyKeyIsAUsageError(arguments: [String]) throws {
        let fixture = try CLIFixture()
        try fixture.seed(count: 1)
        let result = try StashTool.run(arguments.map { $0 == "$CACHE" ? fixture.cache : $0 })
        #expect(result.status == 2)
        #expect(result.errorLines.count == 1)
        #expect(result.stderr.hasPrefix("stash: error: the key must not be empty"))
    }

    @Test(arguments: [
        (["trim", "$CACHE", "--size", "10XB"], "unknown unit 'XB'"),
        (["trim", "$CACHE", "--size", "-5"], "is negative"),
        (["trim", "$CACHE", "--size", "99999999999999999999"], "too large"),
        (["trim", "$CACHE", "--age", "soon"], "is not a duration"),
        (["trim", "$CACHE", "--age", "5w"], "unknown unit 'w'"),
        (["trim", "$CACHE", "--count", "-1"], "--count must be zero or more"),
        (["trim", "$CACHE", "--count", "many"], "many"),
        (["trim", "$CACHE"], "give at least one limit"),
        (["set", "$CACHE", "k", "--ttl", "0"], "--ttl must be more than zero"),
        (["set", "$CACHE", "k", "--ttl", "x"], "is not a duration"),
        (["get", "$CACHE"], "Missing expected argument '<key>'"),
        (["frobnicate"], "Unexpected argument 'frobnicate'"),
    ])
    func badArgumentsAreUsageErrors(arguments: [String], message: String) throws {
        let fixture = try CLIFixture()
        try fixture.seed(count: 1)
        let result = try StashTool.run(arguments.map { $0 == "$CACHE" ? fixture.cache : $0 })
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        #expect(result.errorLines.count == 1, "one line: \(result.stderr)")
        #expect(result.stderr.hasPrefix("stash: error: "))
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }

    @Test func anUnreadableInputFileIsAFailure() throws {
        let fixture = try CLIFixture()
        let result = try fixture.stash("set", "$CACHE", "k", fixture.temporary.appending("absent.bin"))
        #expect(result.status == 4)
        #expect(result.errorLines.count == 1)
        #expect(result.stderr.contains("cannot open"))
    }

    // MARK: - stats

    @Test func statsPrintsAlignedLines() throws {
        #expect(Self.fileSize > DiskStorageKind.defaultInlineThreshold)
        let fixture = try CLIFixture()
        try fixture.seed(count: 2, size: 100)
        try fixture.seed(count: 1, size: Self.fileSize, keyPrefix: "big-")
        let result = try fixture.stash("stats", "$CACHE")
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 8)
        #expect(lines.contains("entries        3"))
        #expect(lines.contains("total size     40.2 KB (40200 bytes)"))
        #expect(lines.contains("inline         2"))
        #expect(lines.contains("in files       1"))
        let valueColumns = Set(lines.map { line in line.firstRange(of: #/  \S/#)!.upperBound.utf16Offset(in: line) })
        #expect(valueColumns.count == 1, "values start in one column")
        #expect(lines.contains { $0.wholeMatch(of: #/oldest access  \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/#) != nil })
    }

    @Test func statsAsJSON() throws {
        let fixture = try CLIFixture()
        let before = Date()
        try fixture.seed(count: 2, size: 100)
        try fixture.seed(count: 1, size: Self.fileSize, keyPrefix: "big-")
        let result = try fixture.stash("stats", "--json", "$CACHE")
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        #expect(object["directory"] as? String == fixture.cache)
        #expect(object["count"] as? Int == 3)
        #expect(object["totalSize"] as? Int == 40_200)
        #expect(object["inlineCount"] as? Int == 2)
        #expect(object["fileCount"] as? Int == 1)
        #expect((object["manifestBytes"] as? Int ?? 0) > 0)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let oldest = try #require((object["oldestAccess"] as? String).flatMap(formatter.date(from:)))
        let newest = try #require((object["newestAccess"] as? String).flatMap(formatter.date(from:)))
        #expect(oldest <= newest)
        #expect(oldest >= before.addingTimeInterval(-1) && newest <= Date().addingTimeInterval(1), "UTC, around now")
        #expect((object["newestAccess"] as? String)?.hasSuffix("Z") == true)
    }

    @Test func statsOfAnEmptyCacheHasNoAccessTimes() throws {
        let fixture = try CLIFixture()
        try fixture.seed(count: 0)
        let json = try fixture.stash("stats", "--json", "$CACHE")
        #expect(json.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any])
        #expect(object["count"] as? Int == 0)
        #expect(object["oldestAccess"] is NSNull)
        #expect(object["newestAccess"] is NSNull)
        let text = try fixture.stash("stats", "$CACHE")
        #expect(text.output.contains("oldest access  none\n"))
    }

    // MARK: - trim

    @Test func trimByCountKeepsTheMostRecentlyUsed() throws {
        let fixture = try CLIFixture()
        try fixture.seed(count: 5)
        // A read makes key-0 the most recently used.
        #expect(try fixture.stash("get", "$CACHE", "key-0").status == 0)
        let result = try fixture.stash("trim", "$CACHE", "--count", "2")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.output == "removed 3 entries (30 bytes); 2 entries (20 bytes) left\n")
        #expect(try fixture.stash("get", "$CACHE", "key-0").status == 0)
        #expect(try fixture.stash("get", "$CACHE", "key-4").status == 0)
        for key in ["key-1", "key-2", "key-3"] {
            #expect(try fixture.stash("get", "$CACHE", key).status == 1, "\(key)")
        }
    }

    @Test func trimBySizeWithASuffixAndByAge() throws {
        let fixture = try CLIFixture()
        try fixture.seed(count: 4, size: 1_000)
        let size = try fixture.stash("trim", "$CACHE", "--size", "2.5KB")
        #expect(size.status == 0, "\(size.stderr)")
        #expect(size.output == "removed 2 entries (2.0 KB); 2 entries (2.0 KB) left\n")
        let binary = try fixture.stash("trim", "$CACHE", "--size", "1KiB")
        #expect(binary.output == "removed 1 entry (1.0 KB); 1 entry (1.0 KB) left\n")
        // Every entry was written an hour ago or less: --age 1h keeps it, --age 0 does not.
        #expect(try fixture.stash("trim", "$CACHE", "--age", "1h").output.hasPrefix("removed 0 entries"))
        #expect(try fixture.stash("trim", "$CACHE", "--age", "0").output == "removed 1 entry (1.0 KB); 0 entries (0 bytes) left\n")
    }

    // MARK: - clear

    @Test func clearEmptiesTheCacheAndItsFiles() throws {
        let fixture = try CLIFixture()
        try fixture.seed(count: 3_000)
        try fixture.seed(count: 5, size: Self.fileSize, keyPrefix: "big-")
        #expect(try fixture.dataFiles().count == 5)
        let result = try fixture.stash("clear", "$CACHE")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.output == "removed 3005 entries\n")
        #expect(result.stderr.isEmpty, "no progress bar when standard error is not a terminal")
        #expect(try fixture.dataFiles().isEmpty)
        let trash = (try? FileManager.default.contentsOfDirectory(atPath: "\(fixture.cache)/trash")) ?? []
        #expect(trash.isEmpty, "the files were deleted, not left in the trash")
        let stats = try fixture.stash("stats", "--json", "$CACHE")
        let object = try #require(try JSONSerialization.jsonObject(with: stats.stdout) as? [String: Any])
        #expect(object["count"] as? Int == 0)
        #expect(object["totalSize"] as? Int == 0)
    }

    @Test func clearShowsAProgressBarOnATerminal() throws {
        let fixture = try CLIFixture()
        try fixture.seed(count: 5_000)
        let result = try StashTool.run(["clear", fixture.cache], stderrTerminal: true)
        #expect(result.status == 0)
        #expect(result.output == "removed 5000 entries\n")
        #expect(result.stderr.contains("\rclearing ["), "\(result.stderr.debugDescription)")
        #expect(result.stderr.contains("100%  5,000/5,000"))
        #expect(result.stderr.contains("  0%"), "it starts from zero")
        #expect(result.stderr.unicodeScalars.last == "\n", "the bar's line is ended")
    }

    // MARK: - verify

    @Test func verifyOfAConsistentCache() throws {
        let fixture = try CLIFixture()
        try fixture.seed(count: 3)
        let result = try fixture.stash("verify", "$CACHE")
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.output.split(separator: "\n")
        #expect(lines.contains("orphan files removed                0"))
        #expect(lines.contains("entries with missing files removed  0"))
        #expect(lines.last == "consistent: nothing to repair")
    }

    @Test func verifyRemovesAnEntryWhoseFileWasDeleted() throws {
        let fixture = try CLIFixture()
        #expect(try fixture.stash("set", "$CACHE", "big", stdin: Data(repeating: 7, count: Self.fileSize)).status == 0)
        #expect(try fixture.stash("set", "$CACHE", "small", stdin: Data("s".utf8)).status == 0)
        let files = try fixture.dataFiles()
        try #require(files.count == 1, "a value above the inline threshold has a file")
        try FileManager.default.removeItem(atPath: "\(fixture.cache)/data/\(files[0])")

        let result = try fixture.stash("verify", "$CACHE")
        #expect(result.status == 0, "a repair is a success")
        let lines = result.output.split(separator: "\n")
        #expect(lines.contains("entries with missing files removed  1"))
        #expect(lines.last == "repaired: 1 entries with missing files removed")
        #expect(try fixture.stash("get", "$CACHE", "big").status == 1)
        #expect(try fixture.stash("get", "$CACHE", "small").output == "s")
        #expect(try fixture.stash("verify", "$CACHE").output.hasSuffix("consistent: nothing to repair\n"))
    }

    @Test func verifyRemovesAnOldOrphanFileAndKeepsAYoungOne() throws {
        let fixture = try CLIFixture()
        #expect(try fixture.stash("set", "$CACHE", "big", stdin: Data(repeating: 7, count: Self.fileSize)).status == 0)
        let old = "\(fixture.cache)/data/0123456789abcdef0123456789abcdef"
        let young = "\(fixture.cache)/data/fedcba9876543210fedcba9876543210"
        #expect(FileManager.default.createFile(atPath: old, contents: Data("orphan".utf8)))
        #expect(FileManager.default.createFile(atPath: young, contents: Data("maybe being written".utf8)))
        // Orphans are removed once older than an hour's grace period.
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-7_200)], ofItemAtPath: old)

        let result = try fixture.stash("verify", "$CACHE")
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.output.split(separator: "\n")
        #expect(lines.contains("orphan files removed                1"))
        #expect(lines.last == "repaired: 1 orphan files removed")
        #expect(!FileManager.default.fileExists(atPath: old))
        #expect(FileManager.default.fileExists(atPath: young))
        let big = try fixture.stash("get", "$CACHE", "big")
        #expect(big.stdout == Data(repeating: 7, count: Self.fileSize),
                "status \(big.status), \(big.stdout.count) bytes, stderr: \(big.stderr)")
    }

    @Test func verifyReportsADamagedManifestSetAside() throws {
        let fixture = try CLIFixture()
        try fixture.seed(count: 2)
        for suffix in ["-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: "\(fixture.cache)/manifest.sqlite\(suffix)")
        }
        try Data("not a database".utf8).write(to: URL(fileURLWithPath: "\(fixture.cache)/manifest.sqlite"))

        let result = try fixture.stash("verify", "$CACHE")
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.output.split(separator: "\n")
        #expect(lines.contains("manifest reset                      yes"))
        #expect(lines.last == "repaired: manifest damaged: set aside, cache restarted empty")
        #expect(result.errorLines.count == 1, "the cache's own log line, on standard error")
        #expect(result.stderr.contains("set aside"))
        #expect(try fixture.stash("get", "$CACHE", "key-0").status == 1)
    }

    // MARK: - help and demo

    @Test(arguments: ["stats", "get", "set", "rm", "trim", "clear", "verify", "demo"])
    func everyCommandHasHelpWithAnExampleAndTheExitStatuses(command: String) throws {
        let result = try StashTool.run([command, "--help"])
        #expect(result.status == 0)
        #expect(result.output.hasPrefix("OVERVIEW: "))
        #expect(result.output.split(separator: "\n").first.map { $0.count <= 100 } == true, "a one-line abstract")
        #expect(result.output.contains("Example:\n  $ stash \(command)"))
        #expect(result.output.contains("Exit status:\n  0  success\n  1  not found"))
    }

    @Test func theDemoToursTheThreeCachesAndCleansUp() throws {
        let result = try StashTool.run(["demo"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        for heading in ["== MemoryCache", "== DiskCache", "== Cache"] {
            #expect(result.output.contains(heading))
        }
        #expect(result.output.contains("get note -> hello, disk   (it was kept on disk)"))
        // The narration holds for the default policy: the entry read again stays when the count
        // limit makes one go, and the tiered tour reads a key memory really let go.
        let lines = result.output.split(separator: "\n").map(String.init)
        let afterD = try #require(lines.firstIndex { $0.hasPrefix(" set d=date") })
        #expect(lines[afterD + 1].hasPrefix("   evicted ") && !lines[afterD + 1].hasPrefix("   evicted a="))
        let tiered = try #require(lines.firstIndex { $0.hasPrefix("== Cache") })
        let memoryLine = try #require(lines[tiered...].first { $0.hasPrefix("   memory: ") })
            .components(separatedBy: "disk:")[0]
        let readLine = try #require(lines[tiered...].first { $0.hasPrefix(" get ") })
        let readKey = String(readLine.dropFirst(" get ".count).prefix(1))
        #expect(!memoryLine.contains("\"\(readKey)\""), "the key read from disk was not in memory")
        let line = try #require(result.output.split(separator: "\n").last { $0.hasPrefix("removed the temporary directory ") })
        let directory = String(line.dropFirst("removed the temporary directory ".count))
        #expect(directory.contains("stash-demo-"))
        #expect(!FileManager.default.fileExists(atPath: directory), "the demo deletes its temporary directory")
    }
}
