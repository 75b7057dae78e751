import Foundation
import Logging
import Testing
@testable import Stash

/// Bad input: odd keys, empty and oversized values, negative costs and limits.
/// Each has one documented behaviour (the table in docs/reliability.md): stored
/// correctly, or a clear error. Never a crash, never another key's value.
///
/// Rerun: `swift test --filter ReliabilityBadInputTests`.
@Suite(.timeLimit(.minutes(Reliability.minutes(10)))) struct ReliabilityBadInputTests {
    static func disk(_ directory: TemporaryDirectory, _ name: String = "cache", log: LogRecorder = LogRecorder(),
                     storage: DiskStorageKind = .mixed(inlineThreshold: 4096), sizeLimit: Int = .max) throws -> DiskCache<Data> {
        try DiskCache<Data>(
            directory: directory.appending(name),
            configuration: .init(storage: storage, sizeLimit: sizeLimit, autoTrimInterval: nil, logger: log.logger))
    }

    /// Keys that must all be stored as distinct keys, byte for byte.
    static let oddKeys: [String] = [
        "/", "//", "a/b", "/etc/passwd", "..", "../..", "../../escape", "./.", ".tmp-0123", "data", "manifest.sqlite",
        "a\0b", "a", "\0", "line\nbreak", "\r\n", "\n", " ", "tab\tkey", "🌍", "\u{FFFD}",
        String(repeating: "k", count: 1 << 20),  // 1 MB
        String(repeating: "k", count: (1 << 20) - 1) + "l",  // differs only in the last byte
    ]

    @Test func oddKeysAreStoredAsDistinctKeysOnDisk() throws {
        try withTemporaryDirectory { directory in
            let log = LogRecorder()
            let cache = try Self.disk(directory, log: log)
            for (index, key) in Self.oddKeys.enumerated() {
                // Half small (inline), half large (a file): no key reaches a file name.
                try cache.setValue(StressValue.make(key: key, seq: UInt64(index), length: index % 2 == 0 ? 100 : 10_000), forKey: key)
            }
            for (index, key) in Self.oddKeys.enumerated() {
                let read = try cache.value(forKey: key)
                #expect(read.flatMap { StressValue.seq(of: $0, key: key) } == UInt64(index), "key #\(index)")
            }
            #expect(try cache.count == Self.oddKeys.count)
            // File names are 32 hex digits, whatever the keys.
            let names = dataDirectoryEntries(directory.appending("cache"))
            // (Values embed their key, so the 1 MB keys' values are files too.)
            let fileValues = Self.oddKeys.enumerated().filter { $0.offset % 2 == 1 || $0.element.utf8.count > 4_000 }.count
            #expect(names.count == fileValues)
            #expect(names.allSatisfy { $0.count == 32 && $0.allSatisfy(\.isHexDigit) }, "\(names)")
            #expect(!FileManager.default.fileExists(atPath: directory.appending("escape")))
            // Removing the NUL key leaves its prefix "a" alone, and the reverse.
            try cache.removeValue(forKey: "a\0b")
            #expect(try cache.value(forKey: "a\0b") == nil)
            #expect(try cache.value(forKey: "a") != nil)
            // Messages and logs shorten a 1 MB key to its first 64 characters.
            #expect(KVStorage.describe(Self.oddKeys[21]).count < 100)
            cache.close()
            try expectConsistentDirectory(directory.appending("cache"), allowOrphans: false)
        }
    }

    @Test func oddKeysWorkInMemoryAndInTheTieredCache() throws {
        try withTemporaryDirectory { directory in
            let memory = MemoryCache<String, Int>(configuration: .init(autoTrimInterval: nil))
            for (index, key) in Self.oddKeys.enumerated() { memory.setValue(index, forKey: key) }
            for (index, key) in Self.oddKeys.enumerated() { #expect(memory.value(forKey: key) == index) }
            #expect(memory.count == Self.oddKeys.count)
            // The empty key is an ordinary key in memory.
            memory.setValue(-1, forKey: "")
            #expect(memory.value(forKey: "") == -1)

            let cache = try Cache<Data>(
                memory: MemoryCache<String, Data>(configuration: .init(countLimit: 5, autoTrimInterval: nil)),
                disk: Self.disk(directory))
            for (index, key) in Self.oddKeys.enumerated() {
                try cache.setValue(StressValue.make(key: key, seq: UInt64(index), length: 500), forKey: key)
            }
            for (index, key) in Self.oddKeys.enumerated() {
                #expect(try cache.value(forKey: key).flatMap { StressValue.seq(of: $0, key: key) } == UInt64(index))
            }
        }
    }

    @Test func theEmptyKeyIsAClearErrorOnDisk() throws {
        try withTemporaryDirectory { directory in
            let disk = try Self.disk(directory)
            let cache = try Cache<Data>(memory: MemoryCache<String, Data>(configuration: .init(autoTrimInterval: nil)), disk: Self.disk(directory, "tiered"))
            let memoryOnly = try Cache<Data>(memory: MemoryCache<String, Data>(configuration: .init(autoTrimInterval: nil)), disk: nil)
            let attempts: [(String, () throws(StashError) -> Void)] = [
                ("DiskCache.setValue", { () throws(StashError) in try disk.setValue(Data([1]), forKey: "") }),
                ("DiskCache.value", { () throws(StashError) in _ = try disk.value(forKey: "") }),
                ("DiskCache.removeValue", { () throws(StashError) in try disk.removeValue(forKey: "") }),
                ("DiskCache.contains", { () throws(StashError) in _ = try disk.contains("") }),
                ("Cache.setValue", { () throws(StashError) in try cache.setValue(Data([1]), forKey: "") }),
                ("Cache.value", { () throws(StashError) in _ = try cache.value(forKey: "") }),
                ("memory-only Cache.setValue", { () throws(StashError) in try memoryOnly.setValue(Data([1]), forKey: "") }),
            ]
            for (name, attempt) in attempts {
                do throws(StashError) {
                    try attempt()
                    Issue.record("\(name) accepted the empty key")
                } catch {
                    #expect(error.code == .invalidKey, "\(name): \(error)")
                    #expect(error.message == "keys must not be empty", "\(name): \(error)")
                }
            }
            #expect(try disk.count == 0)
        }
    }

    @Test func invalidUTF8IsRepairedBeforeItReachesTheCache() throws {
        let first = String(decoding: [0xFF, 0xFE, 0x41] as [UInt8], as: UTF8.self)
        let second = String(decoding: [0xC0, 0x80, 0x41] as [UInt8], as: UTF8.self)
        // Swift replaces each invalid sequence by U+FFFD: both are "\u{FFFD}\u{FFFD}A".
        #expect(first == "\u{FFFD}\u{FFFD}A")
        #expect(first == second)
        #expect(Array(first.utf8) == [0xEF, 0xBF, 0xBD, 0xEF, 0xBF, 0xBD, 0x41])

        try withTemporaryDirectory { directory in
            let cache = try Self.disk(directory)
            try cache.setValue(Data("one".utf8), forKey: first)
            // The same key: the second spelling reads and replaces the first's value.
            #expect(try cache.value(forKey: second) == Data("one".utf8))
            try cache.setValue(Data("two".utf8), forKey: second)
            #expect(try cache.value(forKey: first) == Data("two".utf8))
            #expect(try cache.count == 1)
            // What reached the manifest is the repaired UTF-8.
            let keys = try cache.core.withStorage { storage throws(StashError) in
                do { return try storage.allKeys() } catch { throw StashError(.databaseFailed, "\(error)") }
            }
            #expect(keys.map { Array($0.utf8) } == [[0xEF, 0xBF, 0xBD, 0xEF, 0xBF, 0xBD, 0x41]])

            let memory = MemoryCache<String, Int>(configuration: .init(autoTrimInterval: nil))
            memory.setValue(1, forKey: first)
            #expect(memory.value(forKey: second) == 1)
        }
    }

    /// Swift's `String ==` compares canonical equivalence; the disk tier stores
    /// keys in NFC so that it agrees: precomposed "é" and "e" + U+0301 are one
    /// key in memory and on disk.
    @Test func canonicallyEquivalentKeysAreOneKeyInEveryTier() throws {
        let precomposed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        #expect(precomposed == decomposed)
        try withTemporaryDirectory { directory in
            let disk = try Self.disk(directory)
            try disk.setValue(Data([1]), forKey: precomposed)
            try disk.setValue(Data([2]), forKey: decomposed)
            #expect(try disk.value(forKey: precomposed) == Data([2]))
            #expect(try disk.value(forKey: decomposed) == Data([2]))
            #expect(try disk.count == 1)
            #expect(try disk.removeValue(forKey: precomposed))
            #expect(try !disk.contains(decomposed))
            let memory = MemoryCache<String, Int>(configuration: .init(autoTrimInterval: nil))
            memory.setValue(1, forKey: precomposed)
            memory.setValue(2, forKey: decomposed)
            #expect(memory.count == 1 && memory.value(forKey: precomposed) == 2)
        }
    }

    // MARK: - Values

    @Test(arguments: [DiskStorageKind.sqlite, .file, .mixed(inlineThreshold: 4096)])
    func anEmptyValueIsStoredAndReadBackEmpty(kind: DiskStorageKind) throws {
        try withTemporaryDirectory { directory in
            let cache = try Self.disk(directory, storage: kind)
            try cache.setValue(Data(), forKey: "empty")
            #expect(try cache.value(forKey: "empty") == Data())
            #expect(try cache.contains("empty"))
            #expect(try cache.totalSize == 0 && cache.count == 1)
            cache.close()
            let reopened = try Self.disk(directory, storage: kind)
            #expect(try reopened.value(forKey: "empty") == Data())
            let tiered = try Cache<Data>(memory: MemoryCache<String, Data>(configuration: .init(autoTrimInterval: nil)), disk: reopened)
            try tiered.setValue(Data(), forKey: "also-empty")
            #expect(try tiered.value(forKey: "also-empty") == Data())
            reopened.close()
            try expectConsistentDirectory(directory.appending("cache"), allowOrphans: false)
        }
    }

    @Test func aValueLargerThanTheSizeLimitIsRefusedAndTheOldOneKept() throws {
        try withTemporaryDirectory { directory in
            let cache = try Self.disk(directory, sizeLimit: 10_000)
            try cache.setValue(Data(count: 5_000), forKey: "key")
            do throws(StashError) {
                try cache.setValue(Data(count: 10_001), forKey: "key")
                Issue.record("a value over the size limit was accepted")
            } catch {
                #expect(error.code == .valueTooLarge)
                #expect(error.message.contains("10001 bytes exceeds the size limit of 10000"), "\(error.message)")
            }
            #expect(try cache.value(forKey: "key") == Data(count: 5_000))
            #expect(try cache.totalSize == 5_000)

            // The tiered cache: the error comes through, memory drops the key, disk
            // keeps the old value, so a read returns the old value.
            let tiered = try Cache<Data>(memory: MemoryCache<String, Data>(configuration: .init(autoTrimInterval: nil)), disk: cache)
            try tiered.setValue(Data(count: 100), forKey: "tiered")
            #expect(throws: StashError.self) { try tiered.setValue(Data(count: 20_000), forKey: "tiered") }
            #expect(tiered.memory?.contains("tiered") == false)
            #expect(try tiered.value(forKey: "tiered") == Data(count: 100))

            // Memory: a cost over the cost limit is not stored, and the old value leaves.
            let memory = MemoryCache<String, Int>(configuration: .init(costLimit: 10, autoTrimInterval: nil))
            memory.setValue(1, forKey: "key", cost: 5)
            memory.setValue(2, forKey: "key", cost: 11)
            #expect(memory.value(forKey: "key") == nil)
            #expect(memory.totalCost == 0)
        }
    }

    // MARK: - Negative numbers

    @Test func negativeCostsAndLimitsInMemory() {
        let log = LogRecorder()
        let cache = MemoryCache<String, Int>(configuration: .init(countLimit: -1, costLimit: -5, autoTrimInterval: nil, logger: log.logger))
        #expect(cache.countLimit == 0 && cache.costLimit == 0)
        #expect(log.contains(level: .warning, "countLimit -1 is negative; using 0"))
        #expect(log.contains(level: .warning, "costLimit -5 is negative; using 0"))
        cache.setValue(1, forKey: "a")
        #expect(cache.count == 0, "a count limit of 0 stores nothing")

        let costs = MemoryCache<String, Int>(configuration: .init(costLimit: 100, autoTrimInterval: nil, logger: log.logger))
        costs.setValue(1, forKey: "negative", cost: -50)
        #expect(costs.value(forKey: "negative") == 1)
        #expect(costs.totalCost == 0, "a negative cost counts as 0")
        costs.setValue(2, forKey: "ttl", ttl: .seconds(-1))
        #expect(costs.value(forKey: "ttl") == nil, "a negative ttl stores nothing")
        costs.trim(toCount: -3)
        #expect(costs.count == 0)
        costs.setValue(3, forKey: "b", cost: 10)
        costs.costLimit = -1
        #expect(costs.costLimit == 0 && costs.count == 0, "a negative limit is 0: the cache is emptied")
        #expect(log.contains(level: .warning, "costLimit -1 is negative"))
    }

    @Test func negativeLimitsOnDisk() throws {
        try withTemporaryDirectory { directory in
            // One policy for every negative limit: clamped to 0, with a warning; never thrown.
            for (index, (name, configuration)) in [
                ("countLimit", DiskCacheConfiguration(countLimit: -1)),
                ("sizeLimit", DiskCacheConfiguration(sizeLimit: -1)),
                ("freeDiskSpaceLimit", DiskCacheConfiguration(freeDiskSpaceLimit: -1)),
                ("ageLimit", DiskCacheConfiguration(ageLimit: .seconds(-1))),
                ("inline threshold", DiskCacheConfiguration(storage: .mixed(inlineThreshold: -1))),
            ].enumerated() {
                let log = LogRecorder()
                var configuration = configuration
                configuration.autoTrimInterval = nil
                configuration.logger = log.logger
                let cache = try DiskCache<Data>(directory: directory.appending("\(index)"), configuration: configuration)
                #expect(log.contains(level: .warning, "negative"), "\(name): \(log.messages(at: .warning))")
                switch name {
                case "countLimit": #expect(cache.countLimit == 0)
                case "sizeLimit": #expect(cache.sizeLimit == 0)
                case "freeDiskSpaceLimit": #expect(cache.freeDiskSpaceLimit == 0)
                case "ageLimit": #expect(cache.ageLimit == .zero)
                default:
                    // A threshold of 0 keeps only empty values inline: one byte gets a file.
                    try cache.setValue(Data([1]), forKey: "one")
                    #expect(try cache.usage().fileCount == 1)
                }
                cache.close()
            }

            let log = LogRecorder()
            let cache = try Self.disk(directory, log: log)
            try cache.setValue(Data(count: 10), forKey: "kept")
            try cache.setValue(Data(count: 10), forKey: "ttl", ttl: .seconds(-1))
            #expect(try cache.value(forKey: "ttl") == nil, "a negative ttl stores nothing")
            #expect(try cache.value(forKey: "kept") == Data(count: 10))
            try cache.trim(toCount: -1)
            #expect(try cache.count == 0, "trim(toCount: -1) trims to 0")
            try cache.setValue(Data(count: 10), forKey: "again")
            cache.sizeLimit = -1
            #expect(cache.sizeLimit == 0)
            #expect(log.contains(level: .warning, "sizeLimit must not be negative (got -1); using 0"))
            #expect(try cache.count == 0, "a negative limit is 0: the cache is emptied")
        }
    }
}
