import Foundation
import Logging
import Testing
@testable import Stash

@Suite(.timeLimit(.minutes(5))) struct DiskCacheTests {
    struct Profile: Codable, Equatable, Sendable {
        var name: String
        var visits: Int
    }

    @Test(arguments: [DiskStorageKind.sqlite, .file, .mixed(inlineThreshold: 100)])
    func roundTripsEveryStorageKind(kind: DiskStorageKind) throws {
        try withTemporaryDirectory { directory in
            let cache = try makeDiskCache(directory, codec: .data, storage: kind)
            let small = Data(repeating: 7, count: 10)
            let large = Data((0..<5_000).map { UInt8(truncatingIfNeeded: $0) })
            try cache.setValue(small, forKey: "small")
            try cache.setValue(large, forKey: "large")
            try cache.setValue(Data(), forKey: "empty")
            #expect(try cache.value(forKey: "small") == small)
            #expect(try cache.value(forKey: "large") == large)
            #expect(try cache.value(forKey: "empty") == Data())
            #expect(try cache.value(forKey: "missing") == nil)
            #expect(try cache.count == 3)
            #expect(try cache.totalSize == 5_010)
        }
    }

    @Test func roundTripsEveryCodec() throws {
        try withTemporaryDirectory { directory in
            let strings = try DiskCache<String>(
                directory: directory.appending("s"), codec: .string,
                configuration: .init(autoTrimInterval: nil))
            try strings.setValue("héllo, wörld 🌍", forKey: "greeting")
            #expect(try strings.value(forKey: "greeting") == "héllo, wörld 🌍")

            let profiles = try DiskCache<Profile>(
                directory: directory.appending("p"), codec: .json,
                configuration: .init(autoTrimInterval: nil))
            try profiles.setValue(Profile(name: "Ada", visits: 3), forKey: "ada")
            #expect(try profiles.value(forKey: "ada") == Profile(name: "Ada", visits: 3))

            let reversed = DiskCodec<[UInt8]>(encode: { Data($0.reversed()) }, decode: { Array($0.reversed()) })
            let custom = try DiskCache<[UInt8]>(
                directory: directory.appending("c"), codec: reversed,
                configuration: .init(autoTrimInterval: nil))
            try custom.setValue([1, 2, 3], forKey: "bytes")
            #expect(try custom.value(forKey: "bytes") == [1, 2, 3])
        }
    }

    @Test func aValueThatFailsToDecodeIsAMissRemovedAndLogged() throws {
        try withTemporaryDirectory { directory in
            let raw = try makeDiskCache(directory, codec: .data)
            try raw.setValue(Data([0xFF, 0xFE]), forKey: "bad")
            raw.close()
            let log = LogRecorder()
            let strings = try makeDiskCache(directory, codec: .string, logger: log.logger)
            #expect(try strings.value(forKey: "bad") == nil)
            #expect(try !strings.contains("bad"))
            #expect(log.contains(level: .error, "could not decode"))
        }
    }

    @Test func anEncodingFailureThrowsAndChangesNothing() throws {
        struct Refused: Error {}
        try withTemporaryDirectory { directory in
            let codec = DiskCodec<Int>(encode: { value in
                if value < 0 { throw Refused() }
                return Data(String(value).utf8)
            }, decode: { Int(String(decoding: $0, as: UTF8.self)) ?? 0 })
            let cache = try makeDiskCache(directory, codec: codec)
            try cache.setValue(1, forKey: "a")
            #expect {
                try cache.setValue(-1, forKey: "a")
            } throws: { ($0 as? StashError)?.code == .encodingFailed && ($0 as? StashError)?.cause is Refused }
            #expect(try cache.value(forKey: "a") == 1)
        }
    }

    @Test func emptyKeysAreRejectedWithAClearError() throws {
        try withTemporaryDirectory { directory in
            let cache = try makeDiskCache(directory, codec: .data)
            #expect(throws: StashError.self) { try cache.setValue(Data([1]), forKey: "") }
            do throws(StashError) {
                _ = try cache.value(forKey: "")
                Issue.record("expected an error")
            } catch {
                #expect(error.code == .invalidKey)
                #expect(error.message.contains("empty"))
            }
        }
    }

    @Test func oddKeysRoundTrip() throws {
        try withTemporaryDirectory { directory in
            let cache = try makeDiskCache(directory, codec: .string, storage: .mixed(inlineThreshold: 4))
            let keys = ["../x", "a/b", "/etc/passwd", "nul\0byte", "new\nline", "ключ", "🔑", String(repeating: "k", count: 1 << 20)]
            for (i, key) in keys.enumerated() {
                try cache.setValue("value number \(i)", forKey: key)
            }
            for (i, key) in keys.enumerated() {
                #expect(try cache.value(forKey: key) == "value number \(i)")
            }
            #expect(try cache.value(forKey: "nul") == nil, "a key is not cut at NUL")
            let escaped = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(Set(escaped).isSubset(of: ["manifest.sqlite", "manifest.sqlite-wal", "manifest.sqlite-shm", "data", "trash", "recovery.lock"]))
        }
    }

    @Test func countAndSizeLimitsHoldAfterEveryWriteLeastRecentlyUsedFirst() throws {
        try withTemporaryDirectory { directory in
            let clock = ManualClock(start: 1_000)
            let cache = try makeDiskCache(directory, codec: .data, countLimit: 3, sizeLimit: 100, clock: clock)
            for key in ["a", "b", "c"] {
                try cache.setValue(Data(count: 10), forKey: key)
                clock.advance(by: .seconds(1))
            }
            _ = try cache.value(forKey: "a")  // a is now the most recent
            clock.advance(by: .seconds(1))
            try cache.setValue(Data(count: 10), forKey: "d")
            #expect(try cache.count == 3)
            #expect(try !cache.contains("b"))
            #expect(try cache.contains("a"))
            clock.advance(by: .seconds(1))
            try cache.setValue(Data(count: 85), forKey: "e")  // 10 + 10 + 10 + 85 > 100
            #expect(try cache.totalSize <= 100)
            #expect(try cache.count <= 3)
            #expect(try cache.contains("e"))
        }
    }

    @Test func aValueLargerThanTheSizeLimitIsRefusedAndTheOldOneKept() throws {
        try withTemporaryDirectory { directory in
            let cache = try makeDiskCache(directory, codec: .data, sizeLimit: 50)
            try cache.setValue(Data(count: 20), forKey: "a")
            #expect {
                try cache.setValue(Data(count: 51), forKey: "a")
            } throws: { ($0 as? StashError)?.code == .valueTooLarge }
            #expect(try cache.value(forKey: "a") == Data(count: 20))
        }
    }

    @Test func loweringLimitsTrimsAtOnce() throws {
        try withTemporaryDirectory { directory in
            let clock = ManualClock(start: 1_000)
            let cache = try makeDiskCache(directory, codec: .data, clock: clock)
            for i in 0..<10 {
                try cache.setValue(Data(count: 10), forKey: "k\(i)")
                clock.advance(by: .seconds(1))
            }
            cache.countLimit = 5
            #expect(cache.countLimit == 5)
            #expect(try cache.count == 5)
            #expect(try cache.contains("k9") && !cache.contains("k4"))
            cache.sizeLimit = 30
            #expect(cache.sizeLimit == 30)
            #expect(try cache.totalSize == 30)
            cache.freeDiskSpaceLimit = -1
            #expect(cache.freeDiskSpaceLimit == 0, "a negative limit is clamped")
        }
    }

    @Test func statisticsCountEvictionsByReason() throws {
        try withTemporaryDirectory { directory in
            let clock = ManualClock(start: 1_000)
            let cache = try makeDiskCache(directory, codec: .data, countLimit: 3, clock: clock)
            for i in 0..<5 {
                try cache.setValue(Data(count: 10), forKey: "k\(i)")
                clock.advance(by: .seconds(1))
            }
            cache.sizeLimit = 21  // 30 bytes: one 10-byte entry goes
            try cache.setValue(Data([1]), forKey: "short", ttl: .seconds(1))
            clock.advance(by: .seconds(1))
            #expect(try cache.value(forKey: "short") == nil)
            try cache.removeValue(forKey: "k4")
            let statistics = cache.statistics
            #expect(statistics.evictionsByReason == [.countLimit: 2, .costLimit: 1, .expired: 1])
            #expect(statistics.evictions == 4, "a removal by the caller is not an eviction")
        }
    }

    @Test func negativeLimitsAtInitAreClampedToZeroWithAWarning() throws {
        try withTemporaryDirectory { directory in
            let log = LogRecorder()
            let cache = try makeDiskCache(directory, codec: .data, countLimit: -1, ageLimit: .seconds(-1), logger: log.logger)
            defer { cache.close() }
            #expect(cache.countLimit == 0)
            #expect(cache.ageLimit == .zero)
            #expect(log.contains(level: .warning, "countLimit must not be negative"))
            #expect(log.contains(level: .warning, "ageLimit must not be negative"))
        }
    }

    @Test func ttlAndAgeLimitExpireEntries() throws {
        try withTemporaryDirectory { directory in
            let clock = ManualClock(start: 1_000)
            let cache = try makeDiskCache(directory, codec: .data, ageLimit: .seconds(100), clock: clock)
            try cache.setValue(Data([1]), forKey: "short", ttl: .seconds(10))
            try cache.setValue(Data([2]), forKey: "plain")
            clock.advance(by: .seconds(10))
            #expect(try cache.value(forKey: "short") == nil)
            #expect(try cache.value(forKey: "plain") == Data([2]))
            clock.advance(by: .seconds(90))
            #expect(try cache.value(forKey: "plain") == nil, "the age limit counts from the write")
            try cache.setValue(Data([3]), forKey: "gone", ttl: .zero)
            #expect(try !cache.contains("gone"))
        }
    }

    @Test func loweringTheAgeLimitHidesOlderEntriesAtOnce() throws {
        try withTemporaryDirectory { directory in
            let clock = ManualClock(start: 1_000)
            let cache = try makeDiskCache(directory, codec: .data, clock: clock)
            try cache.setValue(Data([1]), forKey: "old")
            clock.advance(by: .seconds(60))
            cache.ageLimit = .seconds(30)
            #expect(cache.ageLimit == .seconds(30))
            #expect(try cache.value(forKey: "old") == nil)
        }
    }

    @Test func extendedDataIsStoredBesideTheValue() throws {
        try withTemporaryDirectory { directory in
            let cache = try makeDiskCache(directory, codec: .string)
            try cache.setValue("body", forKey: "page", extendedData: Data("etag-1".utf8))
            #expect(try cache.extendedData(forKey: "page") == Data("etag-1".utf8))
            try cache.setValue("body 2", forKey: "page")
            #expect(try cache.extendedData(forKey: "page") == nil)
            #expect(try cache.extendedData(forKey: "none") == nil)
        }
    }

    @Test func removeAllReportsProgressAndEmptiesTheCache() throws {
        try withTemporaryDirectory { directory in
            let cache = try makeDiskCache(directory, codec: .data, storage: .mixed(inlineThreshold: 8))
            for i in 0..<3_000 { try cache.setValue(Data(count: i % 16), forKey: "k\(i)") }
            var reports: [(Int, Int)] = []
            try cache.removeAll { removed, total in reports.append((removed, total)) }
            #expect(reports.last.map { $0 == (3_000, 3_000) } == true)
            #expect(reports.allSatisfy { $0.1 == 3_000 && $0.0 <= 3_000 })
            #expect(try cache.count == 0)
            #expect(try cache.value(forKey: "k5") == nil)
            try cache.setValue(Data([1]), forKey: "after")
            #expect(try cache.value(forKey: "after") == Data([1]))
        }
    }

    @Test func entriesSurviveReopening() throws {
        try withTemporaryDirectory { directory in
            do {
                let cache = try makeDiskCache(directory, codec: .string, storage: .mixed(inlineThreshold: 4))
                try cache.setValue("inline", forKey: "a")
                try cache.setValue("a longer value in a file", forKey: "b")
                cache.close()
                #expect { _ = try cache.value(forKey: "a") } throws: { ($0 as? StashError)?.code == .closed }
            }
            let reopened = try makeDiskCache(directory, codec: .string, storage: .mixed(inlineThreshold: 4))
            #expect(try reopened.value(forKey: "a") == "inline")
            #expect(try reopened.value(forKey: "b") == "a longer value in a file")
        }
    }

    @Test func twoInstancesShareOneDirectory() throws {
        try withTemporaryDirectory { directory in
            let first = try makeDiskCache(directory, codec: .string)
            let second = try makeDiskCache(directory, codec: .string)
            try first.setValue("from first", forKey: "a")
            #expect(try second.value(forKey: "a") == "from first")
            try second.setValue("from second", forKey: "a")
            #expect(try first.value(forKey: "a") == "from second")
            try second.removeValue(forKey: "a")
            #expect(try first.value(forKey: "a") == nil)
            #expect(try first.count == 0)
        }
    }

    @Test func asyncFormsWork() async throws {
        try await withTemporaryDirectory { directory in
            let cache = try makeDiskCache(directory, codec: .string)
            try await cache.setValue("async", forKey: "a", extendedData: Data([9]))
            #expect(try await cache.value(forKey: "a") == "async")
            #expect(try await cache.contains("a"))
            #expect(try await cache.extendedData(forKey: "a") == Data([9]))
            #expect(try await cache.removeValue(forKey: "a"))
            try await cache.setValue("b", forKey: "b")
            try await cache.trim(toCount: 0)
            #expect(try await cache.value(forKey: "b") == nil)
            try await cache.setValue("c", forKey: "c")
            try await cache.removeAll()
            #expect(try cache.count == 0)
            await #expect(throws: StashError.self) { try await cache.setValue("x", forKey: "") }
        }
    }

    @Test func theCacheIsReleasedWithItsTimer() throws {
        try withTemporaryDirectory { directory in
            weak var weakCache: DiskCache<Data>?
            do {
                let cache = try DiskCache<Data>(
                    directory: directory.path,
                    configuration: .init(autoTrimInterval: .milliseconds(5)))
                weakCache = cache
            }
            #expect(weakCache == nil)
        }
    }
}
