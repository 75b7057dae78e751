import Foundation
import Testing
@testable import Stash

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Corruption: the manifest truncated, zeroed or with random pages overwritten; a
/// data file deleted or truncated; `data/` replaced by a plain file; data files and
/// `data/` itself replaced by symbolic links out of the cache. The cache must never
/// crash, return only correct values or misses, recover (accept and return new
/// values, a consistency check clean afterwards) and log what happened; a link out
/// of the cache is never followed.
///
/// Rerun: `swift test --filter ReliabilityCorruptionTests`.
@Suite(.timeLimit(.minutes(Reliability.minutes(10)))) struct ReliabilityCorruptionTests {
    enum Damage: String, CaseIterable, CustomTestStringConvertible {
        case manifestTruncatedToZero, manifestTruncatedToHeader, manifestTruncatedToHalf, manifestZeroed
        case manifestRandomPages1, manifestRandomPages2, manifestRandomPages3, manifestRandomPages4
        case dataFileDeleted, dataFileTruncated, dataDirectoryReplacedByPlainFile
        var testDescription: String { rawValue }
    }

    static let inlineThreshold = 2048

    /// Stores 60 inline and 20 file values, closes the cache, and returns them.
    static func populate(_ path: String) throws -> [String: Data] {
        let cache = try DiskCache<Data>(
            directory: path,
            configuration: .init(storage: .mixed(inlineThreshold: inlineThreshold), autoTrimInterval: nil))
        var stored: [String: Data] = [:]
        for index in 0..<80 {
            let key = index % 4 == 0 ? "file-\(index)" : "inline-\(index)"
            let length = index % 4 == 0 ? 5_000 + index * 400 : 300 + index * 20
            stored[key] = StressValue.make(key: key, seq: UInt64(index), length: length)
            try cache.setValue(stored[key]!, forKey: key)
        }
        cache.close()
        return stored
    }

    /// The name of `key`'s file in `data/`.
    static func filename(of key: String, in path: String) throws -> String {
        let storage = try openCheckingStorage(path)
        defer { storage.close() }
        return try #require(try storage.requireConnection().storedFilename(of: key))
    }

    /// Damages the cache at `path` as `damage` says; returns the keys whose loss is expected.
    static func apply(_ damage: Damage, to path: String, stored: [String: Data]) throws {
        let manifest = "\(path)/manifest.sqlite"
        var bytes = try Data(contentsOf: URL(fileURLWithPath: manifest))
        let pageSize = 4096
        switch damage {
        case .manifestTruncatedToZero:
            bytes = Data()
        case .manifestTruncatedToHeader:
            bytes = bytes.prefix(100)
        case .manifestTruncatedToHalf:
            bytes = bytes.prefix(bytes.count / 2 / pageSize * pageSize)
        case .manifestZeroed:
            bytes = Data(count: bytes.count)
        case .manifestRandomPages1, .manifestRandomPages2, .manifestRandomPages3, .manifestRandomPages4:
            var rng = SeededGenerator(seed: UInt64(damage.rawValue.last!.asciiValue!))
            let pages = bytes.count / pageSize
            for _ in 0..<3 {
                let page = Int.random(in: 0..<pages, using: &rng)
                for offset in (page * pageSize)..<((page + 1) * pageSize) {
                    bytes[offset] = UInt8.random(in: 0...255, using: &rng)
                }
            }
        case .dataFileDeleted:
            try FileManager.default.removeItem(atPath: "\(path)/data/\(try filename(of: "file-0", in: path))")
            return
        case .dataFileTruncated:
            let file = "\(path)/data/\(try filename(of: "file-4", in: path))"
            #expect(truncate(file, 1_000) == 0)
            return
        case .dataDirectoryReplacedByPlainFile:
            try FileManager.default.removeItem(atPath: "\(path)/data")
            try Data("not a directory".utf8).write(to: URL(fileURLWithPath: "\(path)/data"))
            return
        }
        try bytes.write(to: URL(fileURLWithPath: manifest))
    }

    @Test(arguments: Damage.allCases)
    func damageIsSurvivedLoggedAndRepaired(_ damage: Damage) throws {
        try withTemporaryDirectory { directory in
            let path = directory.appending("cache")
            let stored = try Self.populate(path)
            try Self.apply(damage, to: path, stored: stored)

            let log = LogRecorder()
            let cache = try DiskCache<Data>(
                directory: path,
                configuration: .init(
                    storage: .mixed(inlineThreshold: Self.inlineThreshold), autoTrimInterval: nil, logger: log.logger))
            // Every read is the stored value or a miss, never other bytes.
            var misses: [String] = []
            for (key, bytes) in stored.sorted(by: { $0.key < $1.key }) {
                let read = try cache.value(forKey: key)
                #expect(read == nil || read == bytes, "\(damage): \(key) read \(read?.count ?? 0) wrong bytes")
                if read == nil { misses.append(key) }
            }
            cache.waitForBackgroundWork()  // the background consistency check after opening
            let report = try cache.verify()

            // Logged: any loss is explained at warning level or above.
            let logged = log.messages(at: .error) + log.messages(at: .warning) + log.messages(at: .notice)
            if !misses.isEmpty {
                #expect(!logged.isEmpty, "\(damage): \(misses.count) entries lost without a word in the log")
            }
            switch damage {
            case .manifestTruncatedToZero, .manifestTruncatedToHeader, .manifestTruncatedToHalf, .manifestZeroed:
                #expect(log.contains(level: .error, "set aside"), "\(damage): \(logged)")
            case .dataFileDeleted:
                #expect(misses == ["file-0"])
                // Found by the read, or first by the background check after opening.
                #expect(log.contains(level: .warning, "damaged") || log.contains(level: .notice, "repaired"), "\(logged)")
            case .dataFileTruncated:
                #expect(misses == ["file-4"])
                // Found by the read, or first by the background check after opening.
                #expect(log.contains(level: .warning, "damaged") || log.contains(level: .notice, "repaired"), "\(logged)")
            case .dataDirectoryReplacedByPlainFile:
                #expect(misses == stored.keys.filter { $0.hasPrefix("file-") }.sorted())
                #expect(log.contains(level: .error, "data/ is not a directory"), "\(logged)")
            default:
                break
            }
            print("Reliability corruption \(damage): \(stored.count - misses.count) correct, \(misses.count) misses, " +
                  "check: \(report); log: \(Set(logged.map { String($0.prefix(70)) }).sorted())")

            // Recovers: new values of both kinds go in and come back, old survivors too.
            let small = StressValue.make(key: "new-small", seq: 1, length: 500)
            let large = StressValue.make(key: "new-large", seq: 2, length: 30_000)
            try cache.setValue(small, forKey: "new-small")
            try cache.setValue(large, forKey: "new-large")
            #expect(try cache.value(forKey: "new-small") == small)
            #expect(try cache.value(forKey: "new-large") == large)
            // Entries that survived the reads survive the repair, unless the check found
            // the manifest damaged and set it aside (then the cache restarted empty).
            let setAside = log.contains(level: .error, "set aside")
            for (key, bytes) in stored where !misses.contains(key) {
                let read = try cache.value(forKey: key)
                #expect(read == bytes || read == nil && setAside, "\(damage): \(key) after the repair")
            }
            cache.close()
            try expectConsistentDirectory(path, allowOrphans: true)
        }
    }

    // MARK: - Symbolic links out of the cache

    /// The outside files' bytes, by path, to compare after each step.
    static func snapshot(_ directory: String) -> [String: Data] {
        var result: [String: Data] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
            result[name] = FileManager.default.contents(atPath: "\(directory)/\(name)")
        }
        return result
    }

    @Test func aDataFileReplacedByALinkOutOfTheCacheIsNeverFollowed() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appending("cache")
            let outside = directory.appending("outside")
            try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
            let stored = try Self.populate(path)
            // Each file value's file becomes a link to an outside file holding exactly
            // the bytes the row expects: following it would "work", so only never
            // following it passes.
            let linked = stored.keys.filter { $0.hasPrefix("file-") }.sorted()
            for key in linked {
                let name = try Self.filename(of: key, in: path)
                try stored[key]!.write(to: URL(fileURLWithPath: "\(outside)/\(key)"))
                try FileManager.default.removeItem(atPath: "\(path)/data/\(name)")
                try FileManager.default.createSymbolicLink(atPath: "\(path)/data/\(name)", withDestinationPath: "\(outside)/\(key)")
            }
            let before = Self.snapshot(outside)
            #expect(before.count == linked.count)

            let log = LogRecorder()
            let cache = try DiskCache<Data>(
                directory: path,
                configuration: .init(
                    storage: .mixed(inlineThreshold: Self.inlineThreshold), autoTrimInterval: nil, logger: log.logger))
            cache.waitForBackgroundWork()
            func expectOutsideUnchanged(_ step: String, sourceLocation: SourceLocation = #_sourceLocation) {
                #expect(Self.snapshot(outside) == before, "after \(step)", sourceLocation: sourceLocation)
            }

            // Reads: a miss, and the outside file untouched.
            #expect(try cache.value(forKey: linked[0]) == nil)
            expectOutsideUnchanged("a read")
            // removeValue.
            try cache.removeValue(forKey: linked[1])
            expectOutsideUnchanged("removeValue")
            // Trims, which delete the least recently used entries' files.
            try cache.trim(toCount: 70)
            try cache.trim(toSize: 60_000)
            expectOutsideUnchanged("trims")
            // The consistency check.
            _ = try cache.verify()
            expectOutsideUnchanged("the consistency check")
            // removeAll and emptying the trash.
            try cache.removeAll()
            cache.waitForBackgroundWork()
            cache.emptyTrash()
            expectOutsideUnchanged("removeAll and emptying the trash")
            #expect(log.contains(level: .warning, "damaged") || log.contains(level: .notice, "repaired"),
                    "\(log.messages(at: .warning))")
            // Still a working cache.
            let fresh = StressValue.make(key: "fresh", seq: 1, length: 20_000)
            try cache.setValue(fresh, forKey: "fresh")
            #expect(try cache.value(forKey: "fresh") == fresh)
            cache.close()
            try expectConsistentDirectory(path, allowOrphans: false)
            expectOutsideUnchanged("closing")
        }
    }

    @Test func dataReplacedByALinkToADirectoryOutsideIsNeverFollowed() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appending("cache")
            let outside = directory.appending("outside-data")
            let stored = try Self.populate(path)
            // data/ moves out of the cache, and a link takes its place: the names and
            // bytes the rows expect are all there, behind the link.
            try FileManager.default.moveItem(atPath: "\(path)/data", toPath: outside)
            try FileManager.default.createSymbolicLink(atPath: "\(path)/data", withDestinationPath: outside)
            let before = Self.snapshot(outside)

            let log = LogRecorder()
            let cache = try DiskCache<Data>(
                directory: path,
                configuration: .init(
                    storage: .mixed(inlineThreshold: Self.inlineThreshold), autoTrimInterval: nil, logger: log.logger))
            for (key, bytes) in stored {
                let read = try cache.value(forKey: key)
                #expect(read == nil || read == bytes)
                if key.hasPrefix("file-") { #expect(read == nil, "\(key) was read through the link") }
            }
            #expect(Self.snapshot(outside) == before)
            try cache.removeValue(forKey: "file-8")
            try cache.trim(toCount: 40)
            _ = try cache.verify()
            try cache.removeAll()
            cache.waitForBackgroundWork()
            cache.emptyTrash()
            #expect(Self.snapshot(outside) == before, "the outside directory is unchanged")
            #expect(log.contains(level: .error, "data/ is not a directory"), "\(log.messages(at: .error))")
            let fresh = StressValue.make(key: "fresh", seq: 1, length: 20_000)
            try cache.setValue(fresh, forKey: "fresh")
            #expect(try cache.value(forKey: "fresh") == fresh)
            cache.close()
            try expectConsistentDirectory(path, allowOrphans: false)
        }
    }
}
