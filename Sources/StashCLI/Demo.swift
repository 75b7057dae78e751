#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ArgumentParser
import Logging
import Stash

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A short tour of Stash's caches, printing what happens.",
        discussion: """
            Tours MemoryCache, DiskCache, and Cache (memory in front of disk) on a \
            temporary directory, which it deletes at the end. Time is simulated, so \
            expiry shows without waiting.

            Example:
              $ stash demo

            \(ExitStatus.helpText)
            """
    )

    func run() throws(CLIError) {
        memoryTour()
        let directory = try Self.makeTemporaryDirectory()
        defer {
            try? FileManager.default.removeItem(atPath: directory)
            print("\nremoved the temporary directory \(directory)")
        }
        print("\nworking in the temporary directory \(directory)")
        try CacheAccess.attempt("run the disk tour") { () throws(StashError) in try diskTour(in: "\(directory)/disk") }
        try CacheAccess.attempt("run the combined tour") { () throws(StashError) in
            try combinedTour(in: "\(directory)/combined")
        }
    }

    // MARK: - MemoryCache

    private func memoryTour() {
        print("== MemoryCache: strict limits, S3-FIFO eviction (the default policy), expiry")
        let clock = ManualClock()
        let cache = MemoryCache<String, String>(configuration: .init(
            label: "demo", countLimit: 3, costLimit: 100, autoTrimInterval: nil,
            removesAllOnMemoryPressure: false, clock: clock))
        cache.onEvict = { key, value, reason in
            let shown = value.count > 12 ? "\(value.prefix(4))… (\(value.count) characters)" : value
            print("   evicted \(key)=\(shown) (\(reason))")
        }
        for (key, value) in [("a", "apple"), ("b", "banana"), ("c", "cherry")] {
            cache.setValue(value, forKey: key, cost: value.utf8.count)
            print(" set \(key)=\(value) cost \(value.utf8.count)")
        }
        print(" get a -> \(cache.value(forKey: "a") ?? "nil")   (a has now been read again)")
        print(" set d=date: the count limit is 3, so one entry goes: S3-FIFO picks a new entry not read again soon")
        cache.setValue("date", forKey: "d", cost: 4)
        print(" keys in eviction order (the next to go first): \(cache.keys)")
        print(" set e with a cost of 101: more than the cost limit of 100, so it is not kept (onEvict reports it; the statistics do not count it)")
        cache.setValue(String(repeating: "e", count: 101), forKey: "e", cost: 101)
        print(" set f=fig with a 10-second time to live: a fourth entry, so one more goes")
        cache.setValue("fig", forKey: "f", ttl: .seconds(10))
        print(" 11 seconds pass")
        clock.advance(by: .seconds(11))
        print(" get f -> \(cache.value(forKey: "f") ?? "nil")   (expired)")
        print(" count \(cache.count) (limit \(cache.countLimit)), total cost \(cache.totalCost) (limit \(cache.costLimit))")
        let stats = cache.statistics
        let reasons = stats.evictionsByReason.map { "\($0.key): \($0.value)" }.sorted().joined(separator: ", ")
        print(" statistics: \(stats.hits) hits, \(stats.misses) misses, \(stats.evictions) evictions (\(reasons))")
    }

    // MARK: - DiskCache

    private func diskTour(in directory: String) throws(StashError) {
        print("\n== DiskCache: a SQLite manifest plus files, persistent, LRU, expiry")
        let clock = ManualClock(start: 1_750_000_000_000_000_000)
        var cache = try DiskCache<String>(
            directory: directory, codec: .string,
            configuration: .init(countLimit: 3, autoTrimInterval: nil, clock: clock, logger: Self.quietLogger))
        print(" opened a cache in disk/ with a count limit of 3")

        try cache.setValue("hello, disk", forKey: "note")
        print(" set note (11 bytes): small values live inline in manifest.sqlite")
        clock.advance(by: .seconds(1))
        let photoSize = DiskStorageKind.defaultInlineThreshold + 1
        try cache.setValue(String(repeating: "x", count: photoSize), forKey: "photo")
        print(" set photo (\(photoSize) bytes): above the \(DiskStorageKind.defaultInlineThreshold / 1024) KiB inline threshold, so it gets a file")
        let stats = try cache.usage()
        print("   entries \(stats.count): \(stats.inlineCount) inline, \(stats.fileCount) in files under data/ (\(Self.fileCount(in: "\(directory)/data")) there)")

        clock.advance(by: .seconds(1))
        print(" get note -> \(try cache.value(forKey: "note") ?? "nil")   (note is now more recent than photo)")
        clock.advance(by: .seconds(1))
        try cache.setValue("token-123", forKey: "session", ttl: .seconds(10))
        print(" set session with a 10-second time to live")
        clock.advance(by: .seconds(1))
        try cache.setValue("4", forKey: "extra")
        print(" set extra: a fourth entry, over the count limit of 3, so the least recently used goes")
        print("   keys left: \(try Self.present(["note", "photo", "session", "extra"], in: cache))")
        clock.advance(by: .seconds(11))
        print(" 11 seconds pass; get session -> \(try cache.value(forKey: "session") ?? "nil")")

        cache.close()
        print(" closed the cache and opened it again:")
        cache = try DiskCache<String>(
            directory: directory, codec: .string,
            configuration: .init(autoTrimInterval: nil, clock: clock, logger: Self.quietLogger))
        print(" get note -> \(try cache.value(forKey: "note") ?? "nil")   (it was kept on disk)")
        try cache.removeAll()
        print(" removeAll: \(try cache.count) entries, \(try cache.totalSize) bytes")
        cache.close()
    }

    // MARK: - Cache

    private func combinedTour(in directory: String) throws(StashError) {
        print("\n== Cache: memory in front of disk, write-through, promotion")
        let clock = ManualClock(start: 1_750_000_000_000_000_000)
        let memory = MemoryCache<String, String>(configuration: .init(
            label: "combined", countLimit: 2, autoTrimInterval: nil, removesAllOnMemoryPressure: false, clock: clock,
            logger: Self.quietLogger))
        let disk = try DiskCache<String>(
            directory: directory, codec: .string,
            configuration: .init(autoTrimInterval: nil, clock: clock, logger: Self.quietLogger))
        defer { disk.close() }
        let cache = try Cache(memory: memory, disk: disk)
        print(" memory holds at most 2 entries; disk has no limit")

        for (key, value) in [("a", "apple"), ("b", "banana"), ("c", "cherry")] {
            try cache.setValue(value, forKey: key)
            clock.advance(by: .seconds(1))
        }
        print(" set a, b, c: every write goes to both tiers")
        print("   memory: \(memory.keys.sorted())   disk: \(try Self.present(["a", "b", "c"], in: disk))")
        // Which key memory let go depends on the policy (S3-FIFO by default): read that one.
        let gone = ["a", "b", "c"].first { !memory.contains($0) } ?? "a"
        print(" get \(gone) -> \(try cache.value(forKey: gone) ?? "nil")   (not in memory: read from disk and promoted)")
        print("   memory: \(memory.keys.sorted())")
        _ = try cache.removeValue(forKey: gone)
        print(" remove \(gone): gone from both tiers")
        print("   memory: \(memory.keys.sorted())   disk: \(try Self.present(["a", "b", "c"], in: disk))")
    }

    // MARK: - Helpers

    /// The tours' logger: nothing they do should log, and the output is the tour.
    private static var quietLogger: Logger {
        Logger(label: "stash") { _ in SwiftLogNoOpLogHandler() }
    }

    /// Which of `keys` the disk cache holds.
    private static func present(_ keys: [String], in cache: DiskCache<String>) throws(StashError) -> [String] {
        var found: [String] = []
        for key in keys where try cache.contains(key) {
            found.append(key)
        }
        return found
    }

    /// The number of files in `directory`, for showing where values went.
    private static func fileCount(in directory: String) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: directory).count) ?? 0
    }

    /// A new directory under the system's temporary directory, mode 0700.
    private static func makeTemporaryDirectory() throws(CLIError) -> String {
        var base = FileManager.default.temporaryDirectory.path
        while base.count > 1 && base.hasSuffix("/") { base.removeLast() }
        var template = Array("\(base)/stash-demo-XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else {
            throw CLIError(.failure, "cannot create a temporary directory in \(base): \(StandardStreams.errorDescription(errno))")
        }
        return String(cString: created)
    }
}
