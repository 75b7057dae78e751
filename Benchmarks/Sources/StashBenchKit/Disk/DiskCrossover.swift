import Foundation

/// The inline-threshold crossover: DiskCache with every value inline (`.sqlite`)
/// against every value in a file (`.file`), per value size. Each size is a
/// workload of its own (write N values, read them back), the two kinds
/// interleaved per round; N is at most ``maximumValues`` and shrinks as values
/// grow past ``bytesPerRun`` / ``maximumValues``, so that no size writes more than
/// about ``bytesPerRun`` bytes (smaller sizes write less).
public struct CrossoverPlan: Sendable, Codable {
    public var sizes: [Int]
    /// Bytes written per run and contender, spread over the values of one size.
    public var bytesPerRun: Int
    public var maximumValues: Int
    public var minimumValues: Int

    public static func make(quick: Bool) -> CrossoverPlan {
        CrossoverPlan(
            sizes: (0...10).map { 1024 << $0 },
            bytesPerRun: quick ? 4 << 20 : 32 << 20,
            maximumValues: quick ? 100 : 1_000,
            minimumValues: quick ? 8 : 32)
    }

    public func count(forSize size: Int) -> Int {
        min(maximumValues, max(minimumValues, bytesPerRun / size))
    }

    public static func workloadName(size: Int) -> String { "crossover \(byteSizeText(size))" }
}

/// Measures the crossover workloads: one `measureDisk` per size.
public func measureCrossover(_ plan: CrossoverPlan, baseDirectory: String, runs: Int, warmup: Int, seed: UInt64,
                             progress: ProgressHandler?) throws -> [PhaseResult] {
    var results: [PhaseResult] = []
    for size in plan.sizes {
        let workload = DiskWorkload(name: CrossoverPlan.workloadName(size: size), count: plan.count(forSize: size),
                                    valueSize: size, includesMisses: false, seed: seed &+ UInt64(size))
        results += try measureDisk(workload, contenders: DiskContender.crossover, baseDirectory: baseDirectory,
                                   runs: runs, warmup: warmup, progress: progress)
    }
    return results
}

/// One size of the crossover: median nanoseconds per value of each kind.
public struct CrossoverRow: Sendable {
    public var size: Int
    public var values: Int
    public var inlineWrite: Double
    public var fileWrite: Double
    public var inlineRead: Double
    public var fileRead: Double

    /// File time over inline time: below 1, files are cheaper.
    public var writeRatio: Double { fileWrite / inlineWrite }
    public var readRatio: Double { fileRead / inlineRead }
    /// One write and one read per value, weighted equally.
    public var combinedRatio: Double { (fileWrite + fileRead) / (inlineWrite + inlineRead) }
    /// One write and four reads per value: the 80% reads / 20% writes of the
    /// memory section's Zipf mix, since a cache reads a value more often than it
    /// writes it.
    public var readHeavyRatio: Double {
        (fileWrite + CrossoverSummary.readsPerWrite * fileRead) / (inlineWrite + CrossoverSummary.readsPerWrite * inlineRead)
    }
}

/// Where files become cheaper than inline storage.
public enum Crossover: Sendable, Equatable {
    /// Files are cheaper at every measured size (the crossover is below the smallest).
    case below(Int)
    /// Inline is cheaper at every measured size.
    case above(Int)
    /// Between two measured sizes, interpolated (log size, log ratio) at the last
    /// size where the ratio falls below 1 and stays there.
    case at(Double, crossings: Int)

    public var text: String {
        switch self {
        case .below(let size): return "below \(byteSizeText(size))"
        case .above(let size): return "above \(byteSizeText(size))"
        case .at(let bytes, let crossings):
            let kib = bytes / 1024
            let value = kib >= 100 ? fixed(kib, 0) : kib >= 10 ? fixed(kib, 1) : fixed(kib, 2)
            return "\(value) KiB" + (crossings > 1 ? " (the ratio crosses 1 \(crossings) times; last crossing)" : "")
        }
    }

    /// Finds the crossover in ratios (file time / inline time) measured at ascending `sizes`.
    public static func find(sizes: [Int], ratios: [Double]) -> Crossover? {
        guard let first = sizes.first, let last = sizes.last, sizes.count == ratios.count else { return nil }
        if ratios.allSatisfy({ $0 < 1 }) { return .below(first) }
        if ratios.last! >= 1 { return .above(last) }
        var crossings = 0
        for index in 1..<ratios.count where ratios[index - 1] >= 1 && ratios[index] < 1 { crossings += 1 }
        // The last index where the ratio is still >= 1; files win from the next size on.
        let k = ratios.lastIndex { $0 >= 1 }!
        let (s0, s1) = (log2(Double(sizes[k])), log2(Double(sizes[k + 1])))
        let (r0, r1) = (log(ratios[k]), log(ratios[k + 1]))
        let fraction = r0 / (r0 - r1)  // r0 >= 0 > r1: never divides by zero
        return .at(exp2(s0 + (s1 - s0) * fraction), crossings: crossings)
    }
}

/// The crossover measurement read back: per-size rows, the three crossovers, and
/// the recommended default inline threshold.
public struct CrossoverSummary: Sendable {
    public var rows: [CrossoverRow]
    public var write: Crossover?
    public var read: Crossover?
    public var combined: Crossover?
    /// One write and four reads per value.
    public var readHeavy: Crossover?

    /// The reads per write of ``readHeavy``.
    public static let readsPerWrite = 4.0

    public init(phases: [PhaseResult]) {
        var rows: [CrossoverRow] = []
        let inline = DiskCacheStore<InlineKind>.displayName, file = DiskCacheStore<FileKind>.displayName
        for workload in Set(phases.map(\.workload)) {
            let write = phases.first { $0.workload == workload && $0.phase == "write" }
            let read = phases.first { $0.workload == workload && $0.phase == "read-hit" }
            guard let write, let read,
                  let iw = write.samples(named: inline), let fw = write.samples(named: file),
                  let ir = read.samples(named: inline), let fr = read.samples(named: file),
                  let size = write.valueSize, let values = iw.runs.first?.operations
            else { continue }
            rows.append(CrossoverRow(size: size, values: values,
                                     inlineWrite: iw.medianNanosecondsPerOperation, fileWrite: fw.medianNanosecondsPerOperation,
                                     inlineRead: ir.medianNanosecondsPerOperation, fileRead: fr.medianNanosecondsPerOperation))
        }
        rows.sort { $0.size < $1.size }
        self.rows = rows
        let sizes = rows.map(\.size)
        write = Crossover.find(sizes: sizes, ratios: rows.map(\.writeRatio))
        read = Crossover.find(sizes: sizes, ratios: rows.map(\.readRatio))
        combined = Crossover.find(sizes: sizes, ratios: rows.map(\.combinedRatio))
        readHeavy = Crossover.find(sizes: sizes, ratios: rows.map(\.readHeavyRatio))
    }

    /// The crossovers in one line.
    public var text: String {
        "write \(write?.text ?? "-"), read \(read?.text ?? "-"), 1 write + 1 read \(combined?.text ?? "-"), "
            + "1 write + 4 reads \(readHeavy?.text ?? "-")"
    }

    /// The threshold this run suggests: the crossover of one write plus four reads
    /// per value, rounded to the nearest power of two (in log scale), in bytes.
    public var suggestedThreshold: Int? {
        switch readHeavy {
        case .at(let bytes, _)?: return 1 << Int(log2(bytes).rounded())
        case .below(let size)?: return size
        case .above(let size)?: return size
        case nil: return nil
        }
    }
}

/// The recommended default inline threshold, and the disk run it comes from.
public struct ThresholdRecommendation: Sendable {
    public var bytes: Int
    public var run: DiskRun
    public var summary: CrossoverSummary
}

extension BenchReport {
    /// The recommendation: ``CrossoverSummary/suggestedThreshold`` on the disk run
    /// where writing a small value to a file was cheapest (`.file` at the smallest
    /// size: mostly creating the file). That run gives the lowest crossover:
    /// wherever files cost more to create, files win only at larger sizes.
    public var recommendedInlineThreshold: ThresholdRecommendation? {
        let candidates = disk.compactMap { run -> (run: DiskRun, summary: CrossoverSummary, bytes: Int)? in
            let summary = CrossoverSummary(phases: run.crossover)
            return summary.suggestedThreshold.map { (run, summary, $0) }
        }
        let cheapest = candidates.min {
            ($0.summary.rows.first?.fileWrite ?? .infinity) < ($1.summary.rows.first?.fileWrite ?? .infinity)
        }
        return cheapest.map { ThresholdRecommendation(bytes: $0.bytes, run: $0.run, summary: $0.summary) }
    }
}
