import ArgumentParser
import Foundation
import StashBenchKit

@main
struct StashBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stash-bench",
        abstract: "Side-by-side benchmarks of Stash's caches: MemoryCache against NSCache and a locked Dictionary, hit-ratio trace replay, DiskCache against file and SQLite baselines.",
        discussion: """
        Every figure is the median of at least 5 runs taken in this process, the contenders \
        interleaved (A, B, C, A, B, C, ...). Ratios compare medians from the same run.
        Build in release mode: swift build -c release --package-path Benchmarks
        """)

    enum Section: String, ExpressibleByArgument, CaseIterable {
        case memory, hitratio, disk, contention, all
    }

    @Flag(help: "Fewer keys, operations and runs, for CI and quick looks.")
    var quick = false

    @Option(help: "Which section to run: memory, hitratio, disk (DiskCache and baselines), contention (threads sharing one cache) or all.")
    var section: Section = .all

    @Option(help: "The folder of hit-ratio traces and their README (read in place, never copied).")
    var traces: String = "../shared/traces"

    @Option(help: ArgumentHelp(
        "Where the disk section writes (a fresh folder per run, removed after). Default: the temporary directory.",
        discussion: "Repeat it to run the disk section once per folder, e.g. on tmpfs and on a disk's file system."))
    var diskDir: [String] = []

    enum ContentionPart: String, ExpressibleByArgument, CaseIterable {
        case memory, disk
    }

    @Option(help: "Which parts of the contention section to run (repeatable): memory (MemoryCache and its floors), disk (DiskCache reads). Default: both.")
    var contentionPart: [ContentionPart] = []

    @Option(help: ArgumentHelp(
        "Which contenders of the contention section's memory part to run (repeatable), by the name in its table, such as MemoryCache. Default: all.",
        discussion: "For profiling one; the page should come from a run of all."))
    var contender: [String] = []

    enum DiskPart: String, ExpressibleByArgument, CaseIterable {
        case workloads, concurrent, crossover, open
    }

    @Option(help: ArgumentHelp(
        "Which parts of the disk section to run (repeatable): workloads, concurrent, crossover, open. Default: all.",
        discussion: "For quick looks at one figure; the page should come from a run of every part."))
    var diskPart: [DiskPart] = []

    @Option(help: "Write every figure (all runs, medians, machine) to this JSON file.")
    var json: String?

    @Option(help: "Write an SVG bar chart per section into this folder.")
    var svg: String?

    @Option(help: "Write the docs/benchmarks.md page to this path.")
    var markdown: String?

    @Option(help: "Runs per figure (at least 5; default 9, or 5 with --quick).")
    var runs: Int?

    @Option(help: "Seed of the generated workloads.")
    var seed: UInt64 = 20_240_601

    @Flag(help: "Do not show progress on standard error.")
    var noProgress = false

    @Flag(help: "Exit with status 2 if a target or a reference check fails.")
    var strict = false

    @Option(help: "Measure nothing: read a report written earlier with --json and render it (text, --svg, --markdown).")
    var render: String?

    mutating func validate() throws {
        if let runs, runs < 5 { throw ValidationError("--runs must be at least 5: figures are medians of at least 5 runs") }
    }

    func run() throws {
        if let render {
            guard let data = FileManager.default.contents(atPath: render) else {
                throw ValidationError("cannot read \(render)")
            }
            var report = try JSONDecoder().decode(BenchReport.self, from: data)
            // Targets are recomputed from the stored medians, so a report renders with
            // this build's checks (and floors) whatever build measured it.
            for index in report.disk.indices {
                report.disk[index].targets = checkDiskTargets(report.disk[index], settings: report.settings)
            }
            print(report.text(), terminator: "")
            try writeOutputs(report, json: nil)
            return
        }
        let sections: [Section] = section == .all ? [.memory, .hitratio, .disk, .contention] : [section]
        var settings = Settings.make(quick: quick, runs: runs, seed: seed, sections: sections.map(\.rawValue),
                                     traces: sections.contains(.hitratio) ? traces : nil)
        if sections.contains(.disk) { settings.diskDirectories = diskDir }
        let formatter = ISO8601DateFormatter()
        var report = BenchReport(startedAt: formatter.string(from: Date()), machine: .current(), settings: settings)
        #if DEBUG
        report.notes.append("DEBUG build: figures are meaningless; build with -c release")
        #endif
        let progress = Progress.make(enabled: !noProgress)

        if sections.contains(.memory) {
            let contenders = ContenderKind.all
            let rounds = (runs: settings.runs, warmup: settings.warmupRounds)
            report.memory += measure(SetGetWorkload(count: settings.setGetKeys), name: "set/get",
                                     contenders: contenders, runs: rounds.runs, warmup: rounds.warmup, progress: progress)
            report.memory += measure(ZipfMixWorkload(keyCount: settings.zipfKeys, operations: settings.zipfOperations, seed: settings.seed),
                                     name: "zipf mix", contenders: contenders, runs: rounds.runs, warmup: rounds.warmup, progress: progress)
            report.memory += measure(VariedCostWorkload(count: settings.costKeys, seed: settings.seed &+ 1),
                                     name: "varied cost", contenders: contenders, runs: rounds.runs, warmup: rounds.warmup, progress: progress)
            report.memory += measure(ContendedWorkload(threads: settings.contendedThreads, keyCount: settings.zipfKeys,
                                                       operationsPerThread: settings.contendedOperationsPerThread, seed: settings.seed &+ 2),
                                     name: "contended", contenders: contenders, runs: rounds.runs, warmup: rounds.warmup, progress: progress)
            if heapAccountingAvailable {
                report.footprint = measureFootprint(
                    contenders: contenders.filter { $0 != .nsCache }, entries: settings.footprintEntries,
                    runs: settings.footprintRuns, progress: progress)
            } else {
                report.notes.append("memory per entry not measured: needs glibc's mallinfo2")
            }
            report.targets = checkTargets(memory: report.memory, footprint: report.footprint)
            // The set/get limits are never reached: a get-hit that misses, or a get-miss that
            // hits, means a contender dropped or invented entries, and its figures mean little.
            for phase in report.memory where phase.phase == "get-hit" || phase.phase == "get-miss" {
                for samples in phase.contenders {
                    let expected = phase.phase == "get-hit" ? 100.0 : 0.0
                    if let hit = samples.medianHitPercent, hit != expected {
                        report.notes.append("\(samples.contender) \(phase.phase): \(hit)% of lookups hit, expected \(Int(expected))%")
                    }
                }
            }
        }

        if sections.contains(.hitratio) {
            report.hitRatio = try runHitRatio(tracesDirectory: traces, policies: PolicyName.allCases, progress: progress)
        }
        if sections.contains(.disk) {
            let folders: [String?] = diskDir.isEmpty ? [nil] : diskDir
            for folder in folders {
                let base = folder ?? (NSTemporaryDirectory() as NSString).appendingPathComponent("stash-bench-\(getpid())")
                try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
                defer { if folder == nil { try? FileManager.default.removeItem(atPath: base) } }
                var run = DiskRun(directory: base, fileSystem: fileSystemName(of: base))
                run.mount = mountDescription(of: base)
                progress?("disk: probing file creation in \(base)")
                let probeAtStart = try probeFileCreation(baseDirectory: base)
                let rounds = (runs: settings.runs, warmup: settings.warmupRounds)
                let parts = diskPart.isEmpty ? DiskPart.allCases : diskPart
                for (count, size, offset) in [(settings.diskSmallValues, settings.diskSmallValueSize, UInt64(3)),
                                              (settings.diskLargeValues, settings.diskLargeValueSize, UInt64(4))]
                    where parts.contains(.workloads) {
                    let workload = DiskWorkload(name: "disk, \(count.formatted()) × \(byteSizeText(size))", count: count,
                                                valueSize: size, seed: settings.seed &+ offset)
                    run.phases += try measureDisk(workload, contenders: DiskContender.all, baseDirectory: base,
                                                  runs: rounds.runs, warmup: rounds.warmup, progress: progress)
                }
                if parts.contains(.concurrent), let plan = settings.diskConcurrentWrites {
                    run.concurrentWrites = try measureConcurrentWrites(
                        plan, baseDirectory: base, runs: rounds.runs, warmup: rounds.warmup, seed: settings.seed &+ 7,
                        progress: progress)
                }
                if parts.contains(.crossover) {
                    run.crossover = try measureCrossover(settings.diskCrossover, baseDirectory: base, runs: rounds.runs,
                                                         warmup: rounds.warmup, seed: settings.seed &+ 5, progress: progress)
                }
                if parts.contains(.open) {
                    run.open = try measureOpen(settings.diskOpen, baseDirectory: base, runs: rounds.runs, warmup: rounds.warmup,
                                               seed: settings.seed &+ 6, progress: progress)
                }
                run.targets = checkDiskTargets(run, settings: settings)
                run.fileCreationProbe = FileCreationProbe(atStart: probeAtStart,
                                                          atEnd: try probeFileCreation(baseDirectory: base))
                report.disk.append(run)
            }
            report.notes += BenchLog.drain()
        }
        var contention: ContentionReport?
        if sections.contains(.contention) {
            let parts = contentionPart.isEmpty ? ContentionPart.allCases : contentionPart
            var plan = ContentionPlan(quick: quick, rounds: runs, seed: seed)
            plan.contenders = contender
            var report = parts.contains(.memory)
                ? measureContention(plan, progress: progress)
                : ContentionReport(plan: ContentionPlan(quick: quick, rounds: runs, seed: seed), mixes: [], figures: [],
                                   loadAverageAtStart: MachineInfo.loadAverage(), loadAverageAtEnd: "")
            if parts.contains(.disk) {
                report.diskReads = try measureDiskReadContention(
                    DiskReadContentionPlan(quick: quick, rounds: runs, seed: seed), progress: progress)
            }
            report.loadAverageAtEnd = MachineInfo.loadAverage()
            contention = report
        }
        progress?("")
        report.machine.loadAverageAtEnd = MachineInfo.loadAverage()

        print(report.text(), terminator: "")
        try writeOutputs(report, json: json)
        if let contention {
            print(contention.markdown(), terminator: "")
            try writeContention(contention)
        }

        let failed = (report.targets + report.disk.flatMap(\.targets)).contains { !$0.passed }
            || report.hitRatio.contains { $0.stashLRUMatchesReadme != true || !$0.optMatchesReadme }
            || checkHitRatioTargets(report.hitRatio).contains { $0.enforced && !$0.passed }
        if strict && failed {
            throw ExitCode(2)
        }
    }

    private func writeOutputs(_ report: BenchReport, json: String?) throws {
        if let json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try write(try encoder.encode(report), to: json)
            print("wrote \(json)")
        }
        var svgLinks: [String: String] = [:]
        if let svg {
            try FileManager.default.createDirectory(atPath: svg, withIntermediateDirectories: true)
            var charts = [("memory", report.memorySVG()), ("hitratio", report.hitRatioSVG())]
            for (index, run) in report.disk.enumerated() {
                let suffix = run.chartSuffix(index: index)
                charts.append(("disk" + suffix, report.diskSVG(run)))
                charts.append(("disk-crossover" + suffix, report.crossoverSVG(run)))
            }
            for (name, content) in charts {
                guard let content else { continue }
                let path = (svg as NSString).appendingPathComponent("\(name).svg")
                try write(Data(content.utf8), to: path)
                svgLinks[name] = link(from: markdown, to: path)
                print("wrote \(path)")
            }
        }
        if let markdown {
            try write(Data(report.markdownPage(svgLinks: svgLinks).utf8), to: markdown)
            print("wrote \(markdown)")
        }
    }

    /// The contention section's chart (`contention.svg` beside the others) and,
    /// with --json, its figures in `<json>-contention.json`. Its table is in the text output.
    private func writeContention(_ contention: ContentionReport) throws {
        if let svg, !contention.figures.isEmpty {
            let path = (svg as NSString).appendingPathComponent("contention.svg")
            try write(Data(contention.svg().utf8), to: path)
            print("wrote \(path)")
        }
        if let json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let path = (json as NSString).deletingPathExtension + "-contention.json"
            try write(try encoder.encode(contention), to: path)
            print("wrote \(path)")
        }
    }

    private func write(_ data: Data, to path: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        try data.write(to: URL(fileURLWithPath: path))
    }

    /// `target` relative to the folder of `page` when it lies below it, else absolute.
    private func link(from page: String?, to target: String) -> String {
        let absoluteTarget = URL(fileURLWithPath: target).standardizedFileURL.path
        guard let page else { return absoluteTarget }
        let folder = URL(fileURLWithPath: page).standardizedFileURL.deletingLastPathComponent().path
        let prefix = folder.hasSuffix("/") ? folder : folder + "/"
        return absoluteTarget.hasPrefix(prefix) ? String(absoluteTarget.dropFirst(prefix.count)) : absoluteTarget
    }
}

/// A one-line progress indicator on standard error, only when it is a terminal.
enum Progress {
    static func make(enabled: Bool) -> ProgressHandler? {
        guard enabled, isatty(STDERR_FILENO) == 1 else { return nil }
        return { text in
            let line = text.isEmpty ? "\r\u{1B}[K" : "\r\u{1B}[K[stash-bench] \(text)"
            FileHandle.standardError.write(Data(line.utf8))
        }
    }
}
