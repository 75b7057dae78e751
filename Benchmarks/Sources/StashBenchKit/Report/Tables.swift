import Foundation

/// A table rendered both for the terminal and as Markdown.
public struct Table: Sendable {
    public enum Alignment: Sendable { case left, right }
    public var title: String
    public var headers: [String]
    public var alignments: [Alignment]
    public var rows: [[String]]
    public var notes: [String] = []

    public init(title: String, headers: [String], alignments: [Alignment]? = nil, rows: [[String]] = [], notes: [String] = []) {
        self.title = title
        self.headers = headers
        self.alignments = alignments ?? headers.indices.map { $0 == 0 ? .left : .right }
        self.rows = rows
        self.notes = notes
    }

    public func text() -> String {
        var widths = headers.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], cell.count)
            }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                let pad = String(repeating: " ", count: max(0, widths[index] - cell.count))
                return alignments[index] == .left ? cell + pad : pad + cell
            }.joined(separator: "  ")
        }
        var out = title + "\n"
        out += line(headers) + "\n"
        out += widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ") + "\n"
        for row in rows { out += line(row) + "\n" }
        for note in notes { out += "  " + note + "\n" }
        return out
    }

    public func markdown(headingLevel: Int = 3) -> String {
        var out = String(repeating: "#", count: headingLevel) + " " + title + "\n\n"
        out += "| " + headers.joined(separator: " | ") + " |\n"
        out += "|" + alignments.map { $0 == .left ? "---" : "---:" }.joined(separator: "|") + "|\n"
        for row in rows { out += "| " + row.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |\n" }
        if !notes.isEmpty { out += "\n" + notes.joined(separator: "\n\n") + "\n" }
        return out
    }
}

func fixed(_ value: Double, _ decimals: Int) -> String {
    String(format: "%.\(decimals)f", value)
}

func ratioText(_ value: Double?) -> String {
    guard let value else { return "-" }
    return fixed(value, value >= 10 ? 1 : 2) + "x"
}

extension BenchReport {
    /// Memory workloads: one table per phase, each contender's median and its
    /// time ratio to the floor and to every other contender (row / column).
    public func memoryTables() -> [Table] { phaseTables(memory) }

    /// One table per phase: each contender's median and its time ratio to the
    /// floor and to every other contender (row / column).
    public func phaseTables(_ phases: [PhaseResult]) -> [Table] {
        phases.map { phase in
            // Hit ratios say something only where a limit evicts; "-hit" and "-miss" phases hit all or nothing by design.
            let showHits = !phase.phase.hasSuffix("-hit") && !phase.phase.hasSuffix("-miss")
                && phase.contenders.contains { $0.medianHitPercent != nil }
            let fastest = phase.contenders.map(\.medianOperationsPerSecond).max() ?? 0
            let (unitName, unitScale) = fastest >= 1e6 ? ("Mops/s", 1e6) : ("kops/s", 1e3)
            var headers = ["contender", "median ns/op", unitName]
            if showHits { headers.append("hit %") }
            headers += phase.contenders.map { "/ \($0.shortName)" }
            let rows: [[String]] = phase.contenders.map { samples in
                var row = [samples.contender + (samples.isFloor ? " (floor)" : ""),
                           fixed(samples.medianNanosecondsPerOperation, 1),
                           fixed(samples.medianOperationsPerSecond / unitScale, 2)]
                if showHits {
                    var hit = samples.medianHitPercent.map { fixed($0, 2) } ?? "-"
                    if samples.kind == .lockedDictionary, hit != "-" { hit += " (no limit)" }
                    row.append(hit)
                }
                row += phase.contenders.map { other in
                    other.contender == samples.contender ? "1.00x" : ratioText(phase.timeRatio(samples.contender, other.contender))
                }
                return row
            }
            let runCount = phase.contenders.first?.runs.count ?? 0
            return Table(
                title: "\(phase.workload): \(phase.phase)",
                headers: headers, rows: rows,
                notes: [phase.summary,
                        "median of \(runCount) interleaved runs; '/ X' = this row's median time per op divided by X's (below 1.00x: faster than X)"])
        }
    }

    public func footprintTable() -> Table? {
        guard !footprint.isEmpty else { return nil }
        return Table(
            title: "Memory per entry beyond key+value",
            headers: ["contender", "entries", "heap growth MiB", "bytes/entry", "beyond key+value"],
            rows: footprint.map { result in
                let delta = median(result.runsHeapDeltaBytes.map(Double.init))
                return [result.contender + (result.kind.isFloor ? " (floor)" : ""),
                        result.entries.formatted(),
                        fixed(delta / 1_048_576, 1),
                        fixed(delta / Double(result.entries), 1),
                        fixed(result.medianBytesPerEntryBeyondPayload, 1)]
            },
            notes: ["glibc mallinfo2() uordblks + hblkhd growth while inserting; keys \"k0\"... are small Strings (inline, no allocation), values Int: key+value = 16 + 8 = 24 bytes subtracted"])
    }

    public func targetsTable() -> Table? {
        guard !targets.isEmpty else { return nil }
        return Table(
            title: "Targets (ratios of medians from this run)",
            headers: ["target", "contender", "measured", "limit", "result"],
            alignments: [.left, .left, .right, .right, .left],
            rows: targets.map { check in
                let value = check.unit == "B" ? fixed(check.value, 1) + " B" : ratioText(check.value)
                let limit = check.comparison + " " + (check.unit == "B" ? fixed(check.limit, 0) + " B" : ratioText(check.limit))
                return [check.target, check.contender, value, limit, check.passed ? "PASS" : "FAIL"]
            })
    }

    public func hitRatioTable() -> Table? {
        guard !hitRatio.isEmpty else { return nil }
        var matchedLRU = 0, matchedRefLRU = 0, matchedOPT = 0, matchedRefFIFO = 0
        let rows: [[String]] = hitRatio.map { row in
            let stashLRU = row.stash[PolicyName.lru.rawValue]
            let lruOK = row.stashLRUMatchesReadme ?? false
            if lruOK { matchedLRU += 1 }
            if row.referenceLRUMatchesReadme { matchedRefLRU += 1 }
            if row.referenceFIFOMatchesReadme { matchedRefFIFO += 1 }
            if row.optMatchesReadme { matchedOPT += 1 }
            return ["\(row.trace) @ \(row.capacity)",
                    stashLRU.map { twoDecimals($0) } ?? "-",
                    twoDecimals(row.readme.lru),
                    lruOK ? "PASS" : "FAIL",
                    row.stash[PolicyName.fifo.rawValue].map { twoDecimals($0) } ?? "-",
                    twoDecimals(row.readme.fifo),
                    row.stash[PolicyName.lfu.rawValue].map { twoDecimals($0) } ?? "-",
                    "\(twoDecimals(row.readme.bestKnown)) (\(row.readme.bestKnownPolicy))",
                    twoDecimals(row.opt),
                    twoDecimals(row.readme.opt),
                    row.optMatchesReadme ? "PASS" : "FAIL"]
        }
        let n = hitRatio.count
        return Table(
            title: "Hit ratio (%), trace replay: every request counts, capacity in entries, miss -> set",
            headers: ["trace @ capacity", "LRU", "LRU (README)", "LRU check", "FIFO", "FIFO (README)", "LFU",
                      "best known (README)", "OPT (ours)", "OPT (README)", "OPT check"],
            alignments: [.left, .right, .right, .left, .right, .right, .right, .right, .right, .right, .left],
            rows: rows,
            notes: ["LRU, FIFO, LFU: Stash's MemoryCache with countLimit = capacity. OPT (ours): Belady, computed here.",
                    "MemoryCache LRU matches the README in \(matchedLRU)/\(n) rows; OPT in \(matchedOPT)/\(n); the benchmark's own reference LRU in \(matchedRefLRU)/\(n) and reference FIFO in \(matchedRefFIFO)/\(n) (reader check)."])
    }

    public func machineLines() -> [String] {
        [
            "machine: \(machine.cores) cores, \(fixed(Double(machine.memoryBytes) / 1_073_741_824, 1)) GiB, \(machine.cpuModel)",
            "system: \(machine.operatingSystem), \(machine.kernel)",
            "toolchain: \(machine.swiftVersion)",
            "load average (1/5/15 min) at start: \(machine.loadAverageAtStart)" + (machine.loadAverageAtEnd.map { ", at end: \($0)" } ?? ""),
            "settings: \(settings.quick ? "quick" : "full"), \(settings.runs) runs per figure after \(settings.warmupRounds) warm-up round, seed \(settings.seed)",
        ]
    }

    /// The whole report for the terminal.
    public func text() -> String {
        var out = "stash-bench, \(startedAt)\n" + machineLines().joined(separator: "\n") + "\n"
        for note in notes { out += "NOTE: \(note)\n" }
        out += "\n"
        for table in memoryTables() { out += table.text() + "\n" }
        if let table = footprintTable() { out += table.text() + "\n" }
        if let table = targetsTable() { out += table.text() + "\n" }
        if let table = hitRatioTable() { out += table.text() + "\n" }
        if !disk.isEmpty {
            out += "Disk baselines (in \(diskDirectory ?? "?"), \(diskFileSystem ?? "unknown file system"))\n\n"
            for table in phaseTables(disk) { out += table.text() + "\n" }
        }
        return out
    }
}
