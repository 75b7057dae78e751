import BenchSupport
import Foundation
import Stash

/// How long opening a store that already holds many entries takes.
///
/// The stores are filled once (not timed), then each run opens one, reads one
/// entry, and closes it; the contenders are interleaved per round as elsewhere.
/// For a DiskCache, a run opens it twice:
/// 1. `DiskCache(directory:)` is timed until it returns ("init"), then one read is
///    issued at once, as an app would ("first read"): the consistency check that
///    the cache starts in the background runs without the cache's lock (on a
///    connection of its own), so this read does not wait for it, though it shares
///    the disk and CPU with it. The run then waits for the check to end and
///    closes the cache.
/// 2. The cache is opened again and, once its background check is over ("check":
///    from init's return to the check's end), one other entry is read ("first
///    read after the check").
/// The raw SQLite floor opens the database (WAL, synchronous=NORMAL, schema,
/// two prepared statements) and reads one row. Warm page cache: the stores were
/// just filled, and each run reopens the same files.
public struct DiskOpenResult: Sendable, Codable {
    public var contender: String
    public var entries: Int
    public var valueSize: Int
    /// Nanoseconds per run.
    public var initRuns: [UInt64]
    public var firstReadRuns: [UInt64]
    /// DiskCache only: the background consistency check, and a read after it.
    public var checkRuns: [UInt64]
    public var firstReadAfterCheckRuns: [UInt64]

    static func medianOrNil(_ runs: [UInt64]) -> Double? {
        runs.isEmpty ? nil : median(runs.map { Double($0) })
    }

    public var medianInit: Double? { Self.medianOrNil(initRuns) }
    public var medianFirstRead: Double? { Self.medianOrNil(firstReadRuns) }
    /// Init plus the first read, per run, then the median.
    public var medianTimeToFirstRead: Double? {
        Self.medianOrNil(zip(initRuns, firstReadRuns).map { $0 + $1 })
    }
    public var medianCheck: Double? { Self.medianOrNil(checkRuns) }
    public var medianFirstReadAfterCheck: Double? { Self.medianOrNil(firstReadAfterCheckRuns) }
}

/// Who is opened in the open-time measurement.
enum OpenContender: CaseIterable {
    case diskCacheDefault, diskCacheFile, rawSQLite

    var name: String {
        switch self {
        case .diskCacheDefault: DiskCacheStore<DefaultKind>.displayName
        case .diskCacheFile: DiskCacheStore<FileKind>.displayName
        case .rawSQLite: SQLiteStore.displayName
        }
    }

    var folder: String {
        switch self {
        case .diskCacheDefault: "mixed"
        case .diskCacheFile: "file"
        case .rawSQLite: "sqlite"
        }
    }

    var kind: DiskStorageKind? {
        switch self {
        case .diskCacheDefault: DefaultKind.kind
        case .diskCacheFile: FileKind.kind
        case .rawSQLite: nil
        }
    }
}

/// The entry counts and value size of the open-time measurement.
public struct OpenPlan: Sendable, Codable {
    public var entryCounts: [Int]
    public var valueSize: Int

    public static func make(quick: Bool) -> OpenPlan {
        OpenPlan(entryCounts: quick ? [2_000] : [10_000, 100_000], valueSize: 100)
    }
}

/// Measures open times: per entry count, every contender filled once, then
/// `warmup + runs` interleaved rounds.
public func measureOpen(_ plan: OpenPlan, baseDirectory: String, runs: Int, warmup: Int, seed: UInt64,
                        progress: ProgressHandler?) throws -> [DiskOpenResult] {
    let fileManager = FileManager.default
    var generator = SeededGenerator(seed: seed)
    let value = Data((0..<plan.valueSize).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
    var results: [DiskOpenResult] = []
    for entries in plan.entryCounts {
        let keys = (0..<entries).map { "key\($0)" }
        let keyBytes = keys.map { Array($0.utf8) }
        let contenders = OpenContender.allCases
        var directories: [OpenContender: String] = [:]
        defer { for directory in directories.values { try? fileManager.removeItem(atPath: directory) } }
        for contender in contenders {
            progress?("open \(entries.formatted()): filling \(contender.name)")
            let directory = (baseDirectory as NSString).appendingPathComponent("open-\(entries)-\(contender.folder)")
            try? fileManager.removeItem(atPath: directory)
            try fileManager.createDirectory(atPath: directory, withIntermediateDirectories: true)
            directories[contender] = directory
            if let kind = contender.kind {
                let cache = try openQuiescedDiskCache(directory: directory, storage: kind).cache
                for key in keys { try cache.setValue(value, forKey: key) }
                cache.close()
            } else {
                let store = try SQLiteStore(directory: directory, keyBytes: keyBytes)
                try store.begin()
                try value.withUnsafeBytes { bytes in
                    let diskValue = DiskValue(data: value, bytes: bytes)
                    for index in keys.indices { try store.write(index, diskValue) }
                }
                try store.commit()
                store.close()
            }
        }

        var samples: [OpenContender: DiskOpenResult] = [:]
        for contender in contenders {
            samples[contender] = DiskOpenResult(contender: contender.name, entries: entries, valueSize: plan.valueSize,
                                                initRuns: [], firstReadRuns: [], checkRuns: [], firstReadAfterCheckRuns: [])
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: plan.valueSize, alignment: 16)
        defer { buffer.deallocate() }
        let (first, second) = (entries / 2, entries / 3)
        for round in 0..<(warmup + runs) {
            for offset in contenders.indices {
                let contender = contenders[(round + offset) % contenders.count]
                let label = round < warmup ? "warm-up" : "run \(round - warmup + 1)/\(runs)"
                progress?("open \(entries.formatted()): \(label), \(contender.name)")
                let directory = directories[contender]!
                var run = samples[contender]!
                if let kind = contender.kind {
                    let (cache, initNanoseconds) = try openMarkedDiskCache(directory: directory, storage: kind)
                    let opened = monotonicNanoseconds()
                    let found = try cache.value(forKey: keys[first])
                    let read = monotonicNanoseconds()
                    try waitForBackgroundCheck(in: directory)
                    cache.close()
                    let reopened = try openQuiescedDiskCache(directory: directory, storage: kind)
                    let readStart = monotonicNanoseconds()
                    let foundAgain = try reopened.cache.value(forKey: keys[second])
                    let readEnd = monotonicNanoseconds()
                    reopened.cache.close()
                    guard found?.count == plan.valueSize, foundAgain?.count == plan.valueSize else {
                        throw BenchError("\(contender.name): a key of the \(entries.formatted())-entry cache was not found")
                    }
                    if round >= warmup {
                        run.initRuns.append(initNanoseconds)
                        run.firstReadRuns.append(read - opened)
                        run.checkRuns.append(reopened.checkNanoseconds)
                        run.firstReadAfterCheckRuns.append(readEnd - readStart)
                    }
                } else {
                    let start = monotonicNanoseconds()
                    let store = try SQLiteStore(directory: directory, keyBytes: keyBytes)
                    let opened = monotonicNanoseconds()
                    let size = try store.read(first, into: buffer)
                    let read = monotonicNanoseconds()
                    store.close()
                    guard size == plan.valueSize else {
                        throw BenchError("\(contender.name): a key of the \(entries.formatted())-entry store was not found")
                    }
                    if round >= warmup {
                        run.initRuns.append(opened - start)
                        run.firstReadRuns.append(read - opened)
                    }
                }
                samples[contender] = run
            }
        }
        results += contenders.map { samples[$0]! }
    }
    return results
}
