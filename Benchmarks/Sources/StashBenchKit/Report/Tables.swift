import BenchSupport
import Foundation
import Stash

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
        Self.targetsTable(targets, title: "Targets (ratios of medians from this run)")
    }

    /// A table of targets, each with PASS or FAIL.
    public static func targetsTable(_ targets: [TargetCheck], title: String) -> Table? {
        guard !targets.isEmpty else { return nil }
        let hasFloors = targets.contains { $0.floor != nil }
        var headers = ["target", "contender", "measured", "limit", "result"]
        var alignments: [Table.Alignment] = [.left, .left, .right, .right, .left]
        if hasFloors {
            headers.append("SQLite-manifest floor")
            alignments.append(.right)
        }
        return Table(
            title: title, headers: headers, alignments: alignments,
            rows: targets.map { check in
                var row = [check.target, check.contender, check.text(check.value),
                           check.comparison + " " + check.text(check.limit), check.passed ? "PASS" : "FAIL"]
                if hasFloors {
                    row.append(check.floor.map { check.text($0) + (check.floorMissesLimit ? " (out of reach)" : "") } ?? "-")
                }
                return row
            },
            notes: hasFloors ? [
                "SQLite-manifest floor: the same figure for the bare manifest (the issue's manifest schema and files through SQLite's C API, with nothing a cache adds), measured in the same rounds. \"Out of reach\": the floor itself misses the limit on this file system.",
            ] : [])
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
        if let table = policyComparisonTable() { out += table.text() + "\n" }
        if let table = hitRatioTargetsTable() { out += table.text() + "\n" }
        if let recommendation = recommendedInlineThreshold {
            out += recommendationLine(recommendation) + "\n\n"
        }
        for run in disk {
            out += "Disk (in \(run.directory), \(run.mount ?? run.fileSystem))\n"
            if let probe = run.fileCreationProbe {
                out += "creating an empty file: \(fixed(probe.atStart / 1000, 1)) µs at the start, \(fixed(probe.atEnd / 1000, 1)) µs at the end\n"
            }
            out += "\n"
            for table in diskTables(run) { out += table.text() + "\n" }
        }
        return out
    }

    /// The inline threshold's lower bound (the crossover on the file system where a
    /// small file write is cheapest) in one sentence.
    public func recommendationLine(_ recommendation: ThresholdRecommendation) -> String {
        "Inline threshold, lower bound: \(byteSizeText(recommendation.bytes)) (\(recommendation.bytes.formatted()) bytes; "
            + "current default \(byteSizeText(DiskStorageKind.defaultInlineThreshold))): the size where one write plus four reads "
            + "cost the same inline and in a file (\(recommendation.summary.readHeavy?.text ?? "-")), rounded to a power of two, "
            + "on \(recommendation.run.fileSystem), where writing a small value to a file is cheapest"
    }

    /// Every table of one disk run: the workloads, the crossover, open times, targets.
    public func diskTables(_ run: DiskRun) -> [Table] {
        var tables = phaseTables(run.phases)
        if let table = crossoverTable(run) { tables.append(table) }
        if let table = openTable(run) { tables.append(table) }
        if let table = concurrentWritesTable(run) { tables.append(table) }
        if let table = Self.targetsTable(run.targets, title: "DiskCache targets on \(run.fileSystem) (ratios of medians from this run)") {
            tables.append(table)
        }
        return tables
    }

    /// Time per value of DiskCache with every value inline and with every value
    /// in a file, per size, and where files become cheaper.
    public func crossoverTable(_ run: DiskRun) -> Table? {
        let summary = CrossoverSummary(phases: run.crossover)
        guard !summary.rows.isEmpty else { return nil }
        let runCount = run.crossover.first?.contenders.first?.runs.count ?? 0
        let notes = [
            "µs per value, median of \(runCount) interleaved runs; 'file/inline' below 1.00x: files are cheaper. 1w+1r: one write and one read per value; 1w+4r: one write and four reads (80% reads).",
            "crossover (files cheaper from): \(summary.text)",
        ]
        return Table(
            title: "Inline-threshold crossover: DiskCache .sqlite (inline) vs .file, per value size",
            headers: ["value size", "values", "inline write µs", "file write µs", "file/inline", "inline read µs",
                      "file read µs", "file/inline", "1w+1r file/inline", "1w+4r file/inline"],
            rows: summary.rows.map { row in
                [byteSizeText(row.size), row.values.formatted(),
                 fixed(row.inlineWrite / 1000, 1), fixed(row.fileWrite / 1000, 1), ratioText(row.writeRatio),
                 fixed(row.inlineRead / 1000, 1), fixed(row.fileRead / 1000, 1), ratioText(row.readRatio),
                 ratioText(row.combinedRatio), ratioText(row.readHeavyRatio)]
            },
            notes: notes)
    }

    /// One thread against several writing small values to one DiskCache.
    public func concurrentWritesTable(_ run: DiskRun) -> Table? {
        guard let writes = run.concurrentWrites, !writes.singleThreadRuns.isEmpty, !writes.multiThreadRuns.isEmpty else {
            return nil
        }
        let single = writes.medianSingleThreadNanosecondsPerWrite, multi = writes.medianMultiThreadNanosecondsPerWrite
        let cpu = writes.medianCPUNanosecondsPerWrite
        return Table(
            title: "Writers sharing one DiskCache (\(writes.writes.formatted()) values of \(byteSizeText(writes.valueSize)))",
            headers: ["writers", "median µs per write", "kwrites/s", "throughput / 1 thread", "CPU µs per write",
                      "CPU / 1 thread"],
            rows: [
                ["1 thread", fixed(single / 1000, 2), fixed(1e6 / single, 1), "1.00x",
                 cpu.map { fixed($0.single / 1000, 2) } ?? "-", cpu == nil ? "-" : "1.00x"],
                ["\(writes.threads) threads", fixed(multi / 1000, 2), fixed(1e6 / multi, 1), ratioText(writes.speedUp),
                 cpu.map { fixed($0.multi / 1000, 2) } ?? "-", cpu.map { ratioText($0.multi / $0.single) } ?? "-"],
            ],
            notes: [
                "median of \(writes.singleThreadRuns.count) interleaved runs, each into a fresh DiskCache (default kind, no limits, no auto-trim). The threads write distinct keys, start together, and are timed until the last write returns; every write returns once committed. µs per write: the run's wall time divided by the values written. CPU µs per write: the process's CPU time (every thread) in the same runs, divided likewise: what a write costs whatever else the machine runs.",
            ])
    }

    /// Open times of stores that already hold many entries.
    public func openTable(_ run: DiskRun) -> Table? {
        guard !run.open.isEmpty else { return nil }
        func time(_ nanoseconds: Double?) -> String {
            guard let nanoseconds else { return "-" }
            return nanoseconds >= 1e6 ? fixed(nanoseconds / 1e6, 2) + " ms" : fixed(nanoseconds / 1e3, 1) + " µs"
        }
        let runCount = run.open.first?.initRuns.count ?? 0
        return Table(
            title: "Open time of a store holding many entries (values of \(run.open.first.map { byteSizeText($0.valueSize) } ?? "?"))",
            headers: ["entries", "contender", "init", "first read", "first read, slowest run", "init + first read",
                      "background check", "first read after check"],
            alignments: [.right, .left, .right, .right, .right, .right, .right, .right],
            rows: run.open.map { result in
                [result.entries.formatted(), result.contender, time(result.medianInit), time(result.medianFirstRead),
                 time(result.firstReadRuns.max().map { Double($0) }),
                 time(result.medianTimeToFirstRead), time(result.medianCheck), time(result.medianFirstReadAfterCheck)]
            },
            notes: [
                "median of \(runCount) interleaved runs. init: until DiskCache(directory:) returns (for raw SQLite: open, WAL, schema, two prepared statements). first read: issued as soon as init returns; DiskCache's background consistency check runs without the cache's lock (on a connection of its own), so this read does not wait for it, but shares the disk and CPU with it (the slowest run shows it).",
                "background check: from init's return until the check DiskCache starts after opening has finished (a second open). first read after check: a read once it has finished. Warm page cache.",
            ])
    }
}
