import BenchSupport
import CStashBenchSupport

/// Every run of one contender in one phase of a workload.
public struct ContenderSamples: Sendable, Codable {
    public var contender: String
    /// A short name for narrow columns.
    public var shortName: String
    /// True for the floor every other contender is compared with.
    public var isFloor: Bool
    /// The memory contender, for memory workloads.
    public var kind: ContenderKind?
    public var runs: [PhaseSample]
    /// The median over runs of nanoseconds per operation.
    public var medianNanosecondsPerOperation: Double
    public var medianOperationsPerSecond: Double { 1e9 / medianNanosecondsPerOperation }
    /// The median over runs of the hit ratio, for phases that look up.
    public var medianHitPercent: Double?
}

/// One phase of a workload, every contender measured side by side.
public struct PhaseResult: Sendable, Codable {
    public var workload: String
    public var phase: String
    public var summary: String
    public var contenders: [ContenderSamples]
    /// The size of each value, for disk workloads.
    public var valueSize: Int? = nil

    public func samples(named name: String) -> ContenderSamples? {
        contenders.first { $0.contender == name }
    }

    /// Time ratio `a / b` of the medians: above 1, `a` is slower.
    public func timeRatio(_ a: String, _ b: String) -> Double? {
        guard let x = samples(named: a), let y = samples(named: b) else { return nil }
        return x.medianNanosecondsPerOperation / y.medianNanosecondsPerOperation
    }

    public func timeRatio(_ a: ContenderKind, _ b: ContenderKind) -> Double? {
        timeRatio(a.description, b.description)
    }

    /// The floor's name, if the phase has one.
    public var floorName: String? { contenders.first(where: \.isFloor)?.contender }
}

/// Says what is being measured, for a progress line.
public typealias ProgressHandler = @Sendable (_ text: String) -> Void

private struct PrepareVisitor: ContenderVisitor {
    let keys: [String]
    func visit<C: CacheUnderTest>(_ type: C.Type, policy: PolicyName) -> any Sendable {
        C.prepareKeys(keys)
    }
}

private struct RunVisitor<W: MemoryWorkload>: ContenderVisitor {
    let workload: W
    let prepared: any Sendable
    func visit<C: CacheUnderTest>(_ type: C.Type, policy: PolicyName) -> [PhaseSample] {
        guard let keys = prepared as? C.PreparedKeys else {
            preconditionFailure("keys prepared for another contender")
        }
        return workload.run(C.self, policy: policy, keys: keys)
    }
}

/// Measures `workload` on every contender: `warmup` rounds that are thrown away,
/// then `runs` rounds; each round runs every contender once, one after another
/// (A, B, C, A, B, C, ...: noise hits all alike), the starting contender
/// rotating from round to round so that none always follows the same neighbour.
/// Figures are medians over the rounds.
public func measure<W: MemoryWorkload>(
    _ workload: W, name: String, contenders: [ContenderKind], runs: Int, warmup: Int,
    progress: ProgressHandler?
) -> [PhaseResult] {
    var prepared: [ContenderKind: any Sendable] = [:]
    for kind in contenders {
        prepared[kind] = kind.accept(PrepareVisitor(keys: workload.keys))
    }
    var samples: [ContenderKind: [[PhaseSample]]] = [:]
    let rounds = warmup + runs
    for round in 0..<rounds {
        for offset in contenders.indices {
            let kind = contenders[(round + offset) % contenders.count]
            let label = round < warmup ? "warm-up" : "run \(round - warmup + 1)/\(runs)"
            progress?("\(name): \(label), \(kind)")
            let result = kind.accept(RunVisitor(workload: workload, prepared: prepared[kind]!))
            if round >= warmup { samples[kind, default: []].append(result) }
        }
    }
    return workload.phases.enumerated().map { phaseIndex, phase in
        PhaseResult(
            workload: name, phase: phase, summary: workload.summary,
            contenders: contenders.map { kind in
                let runs = samples[kind, default: []].map { $0[phaseIndex] }
                let hitPercents = runs.compactMap(\.hitPercent)
                return ContenderSamples(
                    contender: kind.description, shortName: kind.shortName, isFloor: kind.isFloor, kind: kind, runs: runs,
                    medianNanosecondsPerOperation: median(runs.map(\.nanosecondsPerOperation)),
                    medianHitPercent: hitPercents.isEmpty ? nil : median(hitPercents))
            })
    }
}

/// Heap bytes per entry beyond the key and value, for one contender.
public struct FootprintResult: Sendable, Codable {
    public var contender: String
    public var kind: ContenderKind
    public var entries: Int
    /// Key (a small String, stored inline) plus value (an Int): 16 + 8 bytes.
    public var payloadBytesPerEntry: Int
    /// Heap growth of each run, in bytes.
    public var runsHeapDeltaBytes: [Int64]
    public var medianBytesPerEntryBeyondPayload: Double
}

private struct FootprintVisitor: ContenderVisitor {
    let entries: Int
    let prepared: any Sendable
    func visit<C: CacheUnderTest>(_ type: C.Type, policy: PolicyName) -> Int64 {
        guard let keys = prepared as? C.PreparedKeys else { preconditionFailure("keys prepared for another contender") }
        // MemoryCache is filled to its count limit and then churned through as many
        // keys again, so that policies that remember evicted keys (S3-FIFO's ghost)
        // are measured full; the others hold `entries` entries with no limit reached.
        let churns = C.displayName == StashMemoryCacheContender.displayName
        let limits = CacheLimits(countLimit: churns ? entries : 2 * entries, costLimit: Int.max / 2)
        stash_bench_heap_trim()
        let before = stash_bench_heap_bytes_in_use()
        let cache = C(limits: limits, policy: policy, keys: keys)
        for index in 0..<(churns ? 2 * entries : entries) { cache.set(index, cost: 0) }
        let after = stash_bench_heap_bytes_in_use()
        withExtendedLifetime(cache) {}
        return after - before
    }
}

/// True where the C allocator can report its bytes in use (glibc's mallinfo2).
public var heapAccountingAvailable: Bool { stash_bench_heap_bytes_in_use() >= 0 }

/// Measures heap growth for `entries` entries of small String keys ("k0"..., at most
/// 15 UTF-8 bytes, so stored inline with no allocation of their own) and Int
/// values, with glibc's mallinfo2 (`uordblks` plus `hblkhd`, since tables this
/// large are served by mmap). Subtracts the 24-byte key+value payload. Runs are
/// interleaved like the timed ones; the figure is the median.
public func measureFootprint(contenders: [ContenderKind], entries: Int, runs: Int,
                             progress: ProgressHandler?) -> [FootprintResult] {
    let keys = (0..<2 * entries).map { "k\($0)" }
    precondition(keys.allSatisfy { $0.utf8.count <= 15 }, "footprint keys must be small strings")
    var prepared: [ContenderKind: any Sendable] = [:]
    for kind in contenders { prepared[kind] = kind.accept(PrepareVisitor(keys: keys)) }
    var deltas: [ContenderKind: [Int64]] = [:]
    for round in 0..<runs {
        for offset in contenders.indices {
            let kind = contenders[(round + offset) % contenders.count]
            progress?("memory per entry: run \(round + 1)/\(runs), \(kind)")
            deltas[kind, default: []].append(kind.accept(FootprintVisitor(entries: entries, prepared: prepared[kind]!)))
        }
    }
    let payload = MemoryLayout<String>.size + MemoryLayout<Int>.size
    return contenders.map { kind in
        let runs = deltas[kind, default: []]
        return FootprintResult(
            contender: kind.description, kind: kind, entries: entries, payloadBytesPerEntry: payload,
            runsHeapDeltaBytes: runs,
            medianBytesPerEntryBeyondPayload: median(runs.map { Double($0) / Double(entries) }) - Double(payload))
    }
}
