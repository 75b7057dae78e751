import BenchSupport
import CSQLiteBench
import Foundation
import Stash

// Issue #26: DiskCache reads that scale with threads. 1, 2 and 4 threads read
// one DiskCache holding 10,000 values of 100 B, each thread its own seeded
// uniform stream of keys; every read is a hit. The floor runs in the same
// rounds: the same rows in a bare SQLite table (WAL), read through one
// connection per thread, which is what SQLite itself allows.

/// The settings of the disk-read part of the contention section.
public struct DiskReadContentionPlan: Sendable, Codable {
    public var values = 10_000
    public var valueSize = 100
    public var readsPerThread = 200_000
    public var threadCounts = [1, 2, 4]
    public var rounds = 5
    public var seed: UInt64 = 20_261_125
    /// Where the caches are made: tmpfs (`/dev/shm`) when there is one, so that
    /// the figures are of the code, not of a device.
    public var directory: String

    public init(quick: Bool, rounds: Int?, seed: UInt64) {
        if quick { readsPerThread = 40_000 }
        self.rounds = max(rounds ?? 5, 5)
        self.seed = seed
        var isDirectory: ObjCBool = false
        let shm = "/dev/shm"
        if FileManager.default.fileExists(atPath: shm, isDirectory: &isDirectory), isDirectory.boolValue,
           FileManager.default.isWritableFile(atPath: shm) {
            directory = shm
        } else {
            directory = NSTemporaryDirectory()
        }
    }
}

/// The throughput of one reader kind at one thread count, every round.
public struct DiskReadFigure: Sendable, Codable {
    public var contender: String
    public var threads: Int
    /// Thousand reads per second (all threads' reads / wall time), one per round.
    public var kops: [Double]
    public var median: Double { kops.isEmpty ? 0 : BenchSupport.median(kops) }
}

/// The disk-read figures of the contention section.
public struct DiskReadContentionReport: Sendable, Codable {
    public var plan: DiskReadContentionPlan
    public var figures: [DiskReadFigure]

    public static let diskCache = "DiskCache<Data>"
    public static let diskCacheAsync = "DiskCache<Data>, async"
    public static let rawSQLite = "SQLite, a connection per thread"

    public func figure(_ contender: String, _ threads: Int) -> DiskReadFigure? {
        figures.first { $0.contender == contender && $0.threads == threads }
    }
}

/// Measures DiskCache reads and the raw SQLite floor at every thread count,
/// interleaved in each round.
public func measureDiskReadContention(_ plan: DiskReadContentionPlan, progress: ProgressHandler?) throws
    -> DiskReadContentionReport {
    let base = (plan.directory as NSString).appendingPathComponent("stash-bench-disk-reads-\(getpid())")
    let fileManager = FileManager.default
    try? fileManager.removeItem(atPath: base)
    try fileManager.createDirectory(atPath: base, withIntermediateDirectories: true)
    defer { try? fileManager.removeItem(atPath: base) }

    var generator = SeededGenerator(seed: plan.seed)
    let value = Data((0..<plan.valueSize).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
    let keys = (0..<plan.values).map { "key\($0)" }
    let maxThreads = plan.threadCounts.max() ?? 1
    let streams: [[Int]] = (0..<maxThreads).map { thread in
        var generator = SeededGenerator(seed: plan.seed &+ UInt64(thread) &* 7919)
        return (0..<plan.readsPerThread).map { _ in Int(generator.next() % UInt64(plan.values)) }
    }

    progress?("contention: filling the disk caches")
    let cacheDirectory = (base as NSString).appendingPathComponent("cache")
    let cache = try openQuiescedDiskCache(directory: cacheDirectory, storage: DefaultKind.kind).cache
    defer { cache.close() }
    for key in keys { try cache.setValue(value, forKey: key) }
    let sqlitePath = (base as NSString).appendingPathComponent("raw.sqlite")
    try fillRawTable(path: sqlitePath, keys: keys, value: value)

    let contenders: [(name: String, run: (Int) throws -> UInt64)] = [
        (DiskReadContentionReport.diskCache, { threads in try readDiskCache(cache, keys: keys, streams: streams[0..<threads]) }),
        (DiskReadContentionReport.diskCacheAsync, { threads in try readDiskCacheAsync(cache, keys: keys, streams: streams[0..<threads]) }),
        (DiskReadContentionReport.rawSQLite, { threads in try readRawSQLite(path: sqlitePath, keys: keys, streams: streams[0..<threads]) }),
    ]
    var figures = contenders.flatMap { contender in
        plan.threadCounts.map { DiskReadFigure(contender: contender.name, threads: $0, kops: []) }
    }
    for round in 0..<plan.rounds {
        for threads in plan.threadCounts {
            for contender in contenders {
                progress?("contention: disk reads, round \(round + 1)/\(plan.rounds), \(contender.name), \(threads) threads")
                let nanoseconds = try contender.run(threads)
                let index = figures.firstIndex { $0.contender == contender.name && $0.threads == threads }!
                figures[index].kops.append(Double(threads * plan.readsPerThread) / Double(max(nanoseconds, 1)) * 1_000_000)
            }
        }
    }
    return DiskReadContentionReport(plan: plan, figures: figures)
}

/// Every stream read from `cache` on its own thread, started together; the wall time.
private func readDiskCache(_ cache: DiskCache<Data>, keys: [String], streams: ArraySlice<[Int]>) throws -> UInt64 {
    try readTogether("disk reads", streams: streams) { _, index in try? cache.value(forKey: keys[index]) }
}

/// Every stream read from `cache` through its async API: each thread starts a task
/// that awaits its reads one after the other, and waits for it; the wall time.
private func readDiskCacheAsync(_ cache: DiskCache<Data>, keys: [String], streams: ArraySlice<[Int]>) throws -> UInt64 {
    try runReaders("async disk reads", streams: streams) { _, stream in
        let done = DispatchSemaphore(value: 0)
        let tally = TaskTally()
        Task {
            tally.set(await tallied(stream) { index in try? await cache.value(forKey: keys[index]) })
            done.signal()
        }
        done.wait()
        return tally.get()
    }
}

/// Runs each stream on a thread of its own, started together, reading key `index`
/// with `read(thread, index)`; the wall time. Every read must hit.
private func readTogether(
    _ what: String, streams: ArraySlice<[Int]>, _ read: @escaping @Sendable (_ thread: Int, _ index: Int) -> Data?
) throws -> UInt64 {
    try runReaders(what, streams: streams) { thread, stream in tallied(stream) { read(thread, $0) } }
}

/// Runs `readStream(thread, stream)` for each stream on a thread of its own, started
/// together; the wall time. Every read must hit.
private func runReaders(
    _ what: String, streams: ArraySlice<[Int]>,
    _ readStream: @escaping @Sendable (_ thread: Int, _ stream: [Int]) -> (hits: Int, sum: Int)
) throws -> UInt64 {
    let outcome = StartGate.runTogether(streams.count) { thread in
        let stream = streams[streams.startIndex + thread]
        let (hits, sum) = readStream(thread, stream)
        return (stream.count, hits, sum)
    }
    guard outcome.hits == outcome.lookups else {
        throw BenchError("\(what): \(outcome.lookups - outcome.hits) of \(outcome.lookups) reads missed")
    }
    blackHole(outcome.sum)
    return outcome.nanoseconds
}

/// Reads every key index of `stream`; the hits and the sum of their sizes.
private func tallied(_ stream: [Int], _ read: (Int) -> Data?) -> (hits: Int, sum: Int) {
    var (hits, sum) = (0, 0)
    for index in stream {
        guard let value = read(index) else { continue }
        hits += 1
        sum &+= value.count
    }
    return (hits, sum)
}

/// ``tallied(_:_:)`` for an async read.
private func tallied(_ stream: [Int], _ read: (Int) async -> Data?) async -> (hits: Int, sum: Int) {
    var (hits, sum) = (0, 0)
    for index in stream {
        guard let value = await read(index) else { continue }
        hits += 1
        sum &+= value.count
    }
    return (hits, sum)
}

/// The rows DiskCache would hold, in a bare table: `key TEXT PRIMARY KEY, value BLOB`.
private func fillRawTable(path: String, keys: [String], value: Data) throws {
    let sqlite = try RawSQLite(path: path)
    try sqlite.execute("CREATE TABLE items (key TEXT PRIMARY KEY NOT NULL, value BLOB NOT NULL) WITHOUT ROWID")
    let insert = try sqlite.prepare("INSERT INTO items (key, value) VALUES (?1, ?2)")
    try sqlite.execute("BEGIN")
    for key in keys {
        try value.withUnsafeBytes { bytes in
            try sqlite.write(insert, key: Array(key.utf8)) { statement in
                sqlite3_bind_blob(statement, 2, bytes.baseAddress, Int32(bytes.count), nil)
            }
        }
    }
    try sqlite.execute("COMMIT")
    sqlite.close(finalizing: [insert])
}

/// Every stream read from the bare table through a connection of its own, each
/// value copied into a `Data` as DiskCache returns it; the wall time.
private func readRawSQLite(path: String, keys: [String], streams: ArraySlice<[Int]>) throws -> UInt64 {
    let keyBytes = keys.map { Array($0.utf8) }
    let connections = try streams.indices.map { _ in try RawSQLite(path: path) }
    let statements = try connections.map { try $0.prepare("SELECT value FROM items WHERE key = ?1") }
    defer { for (connection, statement) in zip(connections, statements) { connection.close(finalizing: [statement]) } }
    let shared = UncheckedBox((connections, statements))
    return try readTogether("raw SQLite reads", streams: streams) { thread, index in
        let (connection, statement) = (shared.value.0[thread], shared.value.1[thread])
        let value = try? connection.read(statement, key: keyBytes[index]) { statement -> Data in
            Data(bytes: sqlite3_column_blob(statement, 0), count: Int(sqlite3_column_bytes(statement, 0)))
        }
        return value ?? nil
    }
}

/// What a reading task counted, handed back to its thread.
private final class TaskTally: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched with `lock` held.
    private let lock = NSLock()
    private var value = (hits: 0, sum: 0)
    func set(_ tally: (hits: Int, sum: Int)) { lock.withLock { value = tally } }
    func get() -> (hits: Int, sum: Int) { lock.withLock { value } }
}

/// Hands non-Sendable values to threads that each use only their own element.
private final class UncheckedBox<Value>: @unchecked Sendable {
    // @unchecked Sendable: each thread touches only the connection and statement
    // at its own index, and the owner waits for every thread before closing them.
    let value: Value
    init(_ value: Value) { self.value = value }
}

extension DiskReadContentionReport {
    /// The table as Markdown: median thousand reads per second, ÷ one thread, ÷ the floor.
    public func markdown() -> String {
        var text = "#### DiskCache reads: threads sharing one cache\n\n"
        text += "\(plan.values.formatted()) values of \(plan.valueSize) B in `\(plan.directory)`; each thread reads "
        text += "\(plan.readsPerThread.formatted()) keys of its own seeded uniform stream (every read a hit). The floor "
        text += "holds the same rows in a bare SQLite table (WAL) read through one connection per thread. Median of "
        text += "\(plan.rounds) rounds, interleaved.\n\n"
        text += "| reader | threads | median k reads/s | ÷ 1 thread | ÷ floor, same threads |\n|---|---:|---:|---:|---:|\n"
        for contender in [Self.diskCache, Self.diskCacheAsync, Self.rawSQLite] {
            for threads in plan.threadCounts {
                guard let figure = figure(contender, threads) else { continue }
                let one = self.figure(contender, 1)?.median ?? 0
                let floor = self.figure(Self.rawSQLite, threads)?.median ?? 0
                text += "| \(contender) | \(threads) | \(fixed(figure.median, 0)) | \(fixed(figure.median / max(one, 1e-9), 2))× | "
                text += "\(fixed(figure.median / max(floor, 1e-9), 2))× |\n"
            }
        }
        return text + "\n"
    }
}
