import BenchSupport
import CStashBenchSupport
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A disk workload: N values of one size under distinct keys, written into an
/// empty store, read back (hits), then (optionally) N absent keys read (misses).
/// Warm page cache, no fsync: the figures are the stores' own costs (system
/// calls, SQLite's B-tree and WAL), not the device's.
public struct DiskWorkload: Sendable {
    public let name: String
    public let count: Int
    public let valueSize: Int
    public let includesMisses: Bool
    public let keys: [String]
    public let value: [UInt8]

    public init(name: String, count: Int, valueSize: Int, includesMisses: Bool = true, seed: UInt64) {
        self.name = name
        self.count = count
        self.valueSize = valueSize
        self.includesMisses = includesMisses
        keys = (0..<(2 * count)).map { "key\($0)" }
        var generator = SeededGenerator(seed: seed)
        value = (0..<valueSize).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
    }

    public var phases: [String] { includesMisses ? ["write", "read-hit", "read-miss"] : ["write", "read-hit"] }
    public var summary: String {
        var text = "\(count.formatted()) values of \(valueSize.formatted()) bytes under distinct keys: written into an empty store, read back (hit)"
        if includesMisses { text += ", \(count.formatted()) absent keys read (miss)" }
        return text + "; warm page cache, no fsync"
    }

    func run<S: DiskStoreUnderTest>(_ type: S.Type, directory: String) throws -> [PhaseSample] {
        let store = try S(directory: directory, keys: keys)
        defer { store.close() }
        let n = count
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: valueSize, alignment: 16)
        defer { buffer.deallocate() }
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        let data = Data(value)

        let writeStart = monotonicNanoseconds()
        try data.withUnsafeBytes { bytes in
            let value = DiskValue(data: data, bytes: bytes)
            for index in 0..<n { try store.write(index, value) }
        }
        let writeEnd = monotonicNanoseconds()

        // A hit counts only when it returns the whole value: a store that loses
        // bytes fails the run.
        var hits = 0, sum = 0
        let expectedSize = valueSize
        let hitStart = monotonicNanoseconds()
        for index in 0..<n {
            if let size = try store.read(index, into: buffer), size == expectedSize {
                hits += 1
                sum &+= Int(buffer[size / 2])
            }
        }
        let hitEnd = monotonicNanoseconds()

        var missHits = 0
        let missStart = monotonicNanoseconds()
        if includesMisses {
            for index in n..<(2 * n) {
                if let size = try store.read(index, into: buffer) {
                    missHits += 1
                    sum &+= size
                }
            }
        }
        let missEnd = monotonicNanoseconds()
        blackHole(sum)
        if hits != n || missHits != 0 {
            throw BenchError("\(S.displayName): \(hits)/\(n) reads returned the whole value and \(missHits) absent keys were found")
        }
        var samples = [
            PhaseSample(nanoseconds: writeEnd - writeStart, operations: n, lookups: 0, hits: 0),
            PhaseSample(nanoseconds: hitEnd - hitStart, operations: n, lookups: n, hits: hits),
        ]
        if includesMisses {
            samples.append(PhaseSample(nanoseconds: missEnd - missStart, operations: n, lookups: n, hits: missHits))
        }
        return samples
    }
}

/// A disk contender: a store type, run through the generic workload.
public struct DiskContender {
    public let name: String
    public let shortName: String
    public let isFloor: Bool
    let run: (DiskWorkload, String) throws -> [PhaseSample]

    public init<S: DiskStoreUnderTest>(_ type: S.Type) {
        name = S.displayName
        shortName = S.shortName
        isFloor = S.isFloor
        run = { workload, directory in try workload.run(S.self, directory: directory) }
    }

    /// The baselines, which do not depend on Stash's DiskCache.
    public static var baselines: [DiskContender] {
        [DiskContender(FilePerKeyStore.self), DiskContender(BareManifestStore.self), DiskContender(SQLiteStore.self),
         DiskContender(RawFileStore.self)]
    }

    /// Stash's DiskCache once per storage kind: the default (mixed), all inline, all files.
    public static var diskCaches: [DiskContender] {
        [DiskContender(DiskCacheStore<DefaultKind>.self), DiskContender(DiskCacheStore<InlineKind>.self),
         DiskContender(DiskCacheStore<FileKind>.self)]
    }

    /// Every contender of the disk workloads: DiskCache per kind, then the baselines.
    public static var all: [DiskContender] { diskCaches + baselines }

    /// The inline-threshold crossover: all inline against all files.
    public static var crossover: [DiskContender] {
        [DiskContender(DiskCacheStore<InlineKind>.self), DiskContender(DiskCacheStore<FileKind>.self)]
    }
}

/// The file system a path lives on, by name where known (results depend on it).
public func fileSystemName(of path: String) -> String {
    #if os(Linux)
    let type = stash_bench_file_system_type(path)
    switch type {
    case -1: return "unknown"
    case 0x0102_1994: return "tmpfs"
    case 0xEF53: return "ext4"
    case 0x794C_7630: return "overlayfs"
    case 0x5846_5342: return "xfs"
    case 0x9123_683E: return "btrfs"
    case 0x6573_5546: return "fuse"
    case 0x2FC1_2FC1: return "zfs"
    default: return "f_type 0x" + String(type, radix: 16)
    }
    #else
    return "unknown"
    #endif
}

/// Measures the disk workload on every contender, interleaved as the memory
/// section is, each run in a fresh folder under `baseDirectory` (made and removed
/// outside the timed regions).
public func measureDisk(_ workload: DiskWorkload, contenders: [DiskContender], baseDirectory: String,
                        runs: Int, warmup: Int, progress: ProgressHandler?) throws -> [PhaseResult] {
    let name = workload.name
    let fileManager = FileManager.default
    try fileManager.createDirectory(atPath: baseDirectory, withIntermediateDirectories: true)
    var samples: [String: [[PhaseSample]]] = [:]
    for round in 0..<(warmup + runs) {
        for offset in contenders.indices {
            let contender = contenders[(round + offset) % contenders.count]
            let label = round < warmup ? "warm-up" : "run \(round - warmup + 1)/\(runs)"
            progress?("\(name): \(label), \(contender.name)")
            let directory = (baseDirectory as NSString).appendingPathComponent("run-\(round)-\(offset)")
            try fileManager.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? fileManager.removeItem(atPath: directory) }
            let result = try contender.run(workload, directory)
            if round >= warmup { samples[contender.name, default: []].append(result) }
        }
    }
    return workload.phases.enumerated().map { phaseIndex, phase in
        PhaseResult(
            workload: name, phase: phase, summary: workload.summary,
            contenders: contenders.map { contender in
                let runs = samples[contender.name, default: []].map { $0[phaseIndex] }
                let hitPercents = runs.compactMap(\.hitPercent)
                return ContenderSamples(
                    contender: contender.name, shortName: contender.shortName, isFloor: contender.isFloor, kind: nil,
                    runs: runs, medianNanosecondsPerOperation: median(runs.map(\.nanosecondsPerOperation)),
                    medianHitPercent: hitPercents.isEmpty ? nil : median(hitPercents))
            },
            valueSize: workload.valueSize)
    }
}

/// Nanoseconds to create one empty file, at the start and the end of a disk run.
public struct FileCreationProbe: Sendable, Codable {
    public var atStart: Double
    public var atEnd: Double

    public init(atStart: Double, atEnd: Double) {
        self.atStart = atStart
        self.atEnd = atEnd
    }
}

/// The median over 5 batches of the mean time to create (open O_CREAT|O_EXCL,
/// close) one of 500 empty files in a fresh folder under `baseDirectory`. Some
/// file systems make this far dearer than writing to an open file (ext4 without
/// a journal scans past recently deleted inodes, for instance), which decides
/// how file-based stores fare.
public func probeFileCreation(baseDirectory: String) throws -> Double {
    let fileManager = FileManager.default
    var batches: [Double] = []
    for batch in 0..<5 {
        let directory = (baseDirectory as NSString).appendingPathComponent("probe-\(batch)")
        try? fileManager.removeItem(atPath: directory)
        try fileManager.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? fileManager.removeItem(atPath: directory) }
        let paths = (0..<500).map { Array((directory as NSString).appendingPathComponent("f\($0)").utf8CString) }
        let start = monotonicNanoseconds()
        for path in paths {
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if fd < 0 { throw BenchError("open(\(directory)/...) failed: \(String(cString: strerror(errno)))") }
            _ = close(fd)
        }
        batches.append(Double(monotonicNanoseconds() - start) / Double(paths.count))
    }
    return median(batches)
}

/// The mount a path lives on, from `/proc/self/mountinfo`: source, file system
/// type, options, and for ext4 whether it has a journal (`/proc/fs/jbd2/<dev>-*`
/// exists only for journalled file systems). Nil where unknown.
public func mountDescription(of path: String) -> String? {
    #if os(Linux)
    guard let resolved = realpath(path, nil) else { return nil }
    let target = String(cString: resolved)
    free(resolved)
    guard let mountinfo = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return nil }
    var best: (point: String, type: String, source: String, options: String)?
    for line in mountinfo.split(separator: "\n") {
        let halves = line.components(separatedBy: " - ")
        guard halves.count == 2 else { continue }
        let left = halves[0].split(separator: " "), right = halves[1].split(separator: " ")
        guard left.count >= 5, right.count >= 3 else { continue }
        let point = String(left[4])
        let prefix = point.hasSuffix("/") ? point : point + "/"
        guard target == point || target.hasPrefix(prefix) else { continue }
        if best == nil || point.count >= best!.point.count {
            best = (point, String(right[0]), String(right[1]), String(right[2]))
        }
    }
    guard let best else { return nil }
    var text = "\(best.type) on \(best.source) mounted at \(best.point) (\(best.options))"
    if best.type == "ext4" || best.type == "ext3" {
        let device = (best.source as NSString).lastPathComponent
        let journals = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/fs/jbd2")) ?? []
        text += journals.contains { $0.hasPrefix(device + "-") } ? ", with a journal" : ", without a journal"
    }
    return text
    #else
    return nil
    #endif
}
