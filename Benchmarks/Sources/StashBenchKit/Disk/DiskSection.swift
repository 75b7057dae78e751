import CStashBenchSupport
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The disk workload: N values of one size under distinct keys, written into an
/// empty store, read back (hits), then N absent keys read (misses). Warm page
/// cache, no fsync: the figures are the stores' own costs (system calls, SQLite's
/// B-tree and WAL), not the device's.
public struct DiskWorkload: Sendable {
    public let count: Int
    public let valueSize: Int
    public let keys: [String]
    public let value: [UInt8]

    public init(count: Int, valueSize: Int, seed: UInt64) {
        self.count = count
        self.valueSize = valueSize
        keys = (0..<(2 * count)).map { "key\($0)" }
        var generator = SeededGenerator(seed: seed)
        value = (0..<valueSize).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
    }

    public var phases: [String] { ["write", "read-hit", "read-miss"] }
    public var summary: String {
        "\(count.formatted()) values of \(valueSize.formatted()) bytes under distinct keys: written into an empty store, read back (hit), \(count.formatted()) absent keys read (miss); warm page cache, no fsync"
    }

    func run<S: DiskStoreUnderTest>(_ type: S.Type, directory: String) throws -> [PhaseSample] {
        let store = try S(directory: directory, keys: keys)
        defer { store.close() }
        let n = count
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: valueSize, alignment: 16)
        defer { buffer.deallocate() }

        let writeStart = monotonicNanoseconds()
        try value.withUnsafeBytes { bytes in
            for index in 0..<n { try store.write(index, bytes) }
        }
        let writeEnd = monotonicNanoseconds()

        var hits = 0, sum = 0
        let hitStart = monotonicNanoseconds()
        for index in 0..<n {
            if let size = try store.read(index, into: buffer) {
                hits += 1
                sum &+= size &+ Int(buffer[size / 2])
            }
        }
        let hitEnd = monotonicNanoseconds()

        var missHits = 0
        let missStart = monotonicNanoseconds()
        for index in n..<(2 * n) {
            if let size = try store.read(index, into: buffer) {
                missHits += 1
                sum &+= size
            }
        }
        let missEnd = monotonicNanoseconds()
        blackHole(sum)
        if hits != n || missHits != 0 {
            throw BenchError("\(S.displayName): \(hits)/\(n) reads hit and \(missHits) absent keys were found")
        }
        return [
            PhaseSample(nanoseconds: writeEnd - writeStart, operations: n, lookups: 0, hits: 0),
            PhaseSample(nanoseconds: hitEnd - hitStart, operations: n, lookups: n, hits: hits),
            PhaseSample(nanoseconds: missEnd - missStart, operations: n, lookups: n, hits: missHits),
        ]
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
        [DiskContender(FilePerKeyStore.self), DiskContender(SQLiteStore.self), DiskContender(RawFileStore.self)]
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
public func measureDisk(_ workload: DiskWorkload, name: String, contenders: [DiskContender], baseDirectory: String,
                        runs: Int, warmup: Int, progress: ProgressHandler?) throws -> [PhaseResult] {
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
            })
    }
}
