import BenchSupport
import Foundation

/// Everything one run of stash-bench measured: what `--json` writes.
public struct BenchReport: Sendable, Codable {
    public var tool = "stash-bench"
    public var startedAt: String
    public var machine: MachineInfo
    public var settings: Settings
    public var memory: [PhaseResult] = []
    public var footprint: [FootprintResult] = []
    public var targets: [TargetCheck] = []
    public var hitRatio: [HitRatioRow] = []
    /// The disk section, once per folder it ran in (`--disk-dir` may be repeated).
    public var disk: [DiskRun] = []
    public var notes: [String] = []

    public init(startedAt: String, machine: MachineInfo, settings: Settings) {
        self.startedAt = startedAt
        self.machine = machine
        self.settings = settings
    }
}

/// The knobs of a run, recorded with its figures.
public struct Settings: Sendable, Codable {
    public var quick: Bool
    public var sections: [String]
    public var runs: Int
    public var warmupRounds: Int
    public var seed: UInt64
    public var setGetKeys: Int
    public var zipfKeys: Int
    public var zipfOperations: Int
    public var costKeys: Int
    public var contendedThreads: Int
    public var contendedOperationsPerThread: Int
    public var footprintEntries: Int
    public var footprintRuns: Int
    public var tracesDirectory: String?
    /// The disk workloads: YYCache's small values, and large ones.
    public var diskSmallValues: Int
    public var diskSmallValueSize: Int
    public var diskLargeValues: Int
    public var diskLargeValueSize: Int
    public var diskCrossover: CrossoverPlan
    public var diskOpen: OpenPlan
    /// Writers sharing one DiskCache; optional so that reports written before it decode.
    public var diskConcurrentWrites: ConcurrentWritePlan?
    /// The folders given with `--disk-dir` (none: the temporary directory).
    public var diskDirectories: [String] = []

    public static func make(quick: Bool, runs: Int?, seed: UInt64, sections: [String], traces: String?) -> Settings {
        Settings(
            quick: quick, sections: sections,
            runs: max(5, runs ?? (quick ? 5 : 9)), warmupRounds: 1, seed: seed,
            setGetKeys: quick ? 50_000 : 200_000,
            zipfKeys: quick ? 50_000 : 200_000,
            zipfOperations: quick ? 250_000 : 1_000_000,
            costKeys: quick ? 5_000 : 20_000,
            contendedThreads: 2,
            contendedOperationsPerThread: quick ? 125_000 : 500_000,
            footprintEntries: 1_000_000,
            footprintRuns: quick ? 1 : 3,
            tracesDirectory: traces,
            diskSmallValues: quick ? 500 : 1_000,
            diskSmallValueSize: 100,
            diskLargeValues: quick ? 100 : 1_000,
            diskLargeValueSize: 100 * 1024,
            diskCrossover: .make(quick: quick),
            diskOpen: .make(quick: quick),
            diskConcurrentWrites: .make(quick: quick))
    }
}

/// The machine, as `docs/benchmarks.md` describes it.
public struct MachineInfo: Sendable, Codable {
    public var cores: Int
    public var memoryBytes: UInt64
    public var cpuModel: String
    public var operatingSystem: String
    public var kernel: String
    public var swiftVersion: String
    public var hostname: String
    public var loadAverageAtStart: String
    public var loadAverageAtEnd: String?

    public static func current() -> MachineInfo {
        let info = ProcessInfo.processInfo
        var name = utsname()
        uname(&name)
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
        }
        return MachineInfo(
            cores: info.activeProcessorCount,
            memoryBytes: info.physicalMemory,
            cpuModel: cpuModel(),
            operatingSystem: osName(),
            kernel: "\(field(name.sysname)) \(field(name.release)) \(field(name.machine))",
            swiftVersion: swiftVersion(),
            hostname: info.hostName,
            loadAverageAtStart: loadAverage())
    }

    public static func loadAverage() -> String {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "unknown" }
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    private static func cpuModel() -> String {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return "unknown" }
        for line in text.split(separator: "\n") where line.hasPrefix("model name") {
            if let colon = line.firstIndex(of: ":") {
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return "unknown"
    }

    private static func osName() -> String {
        if let text = try? String(contentsOfFile: "/etc/os-release", encoding: .utf8) {
            for line in text.split(separator: "\n") where line.hasPrefix("PRETTY_NAME=") {
                return String(line.dropFirst("PRETTY_NAME=".count)).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
        }
        return ProcessInfo.processInfo.operatingSystemVersionString
    }

    /// The toolchain's `swift --version` first line where a `swift` is on PATH
    /// (the one that built this binary, in the usual `swift run` case).
    private static func swiftVersion() -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift", "--version"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = Pipe()
        do {
            try process.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            let text = String(decoding: data, as: UTF8.self)
            if let line = text.split(separator: "\n").first(where: { $0.contains("Swift version") }) {
                return line.trimmingCharacters(in: .whitespaces)
            }
        } catch {}
        #if compiler(>=6.3)
        return "Swift 6.3 or later (compiled with)"
        #else
        return "Swift before 6.3 (compiled with)"
        #endif
    }
}

/// One of the targets, checked on ratios from the same run.
public struct TargetCheck: Sendable, Codable {
    public var target: String
    public var contender: String
    /// The measured figure (a time ratio, a speed-up, or bytes per entry).
    public var value: Double
    public var limit: Double
    /// "<=" or ">=".
    public var comparison: String
    /// "x" (a ratio), "B" (bytes) or "ns" (a time, shown in µs).
    public var unit: String
    public var passed: Bool
    /// The section the target belongs to: nil for memory, "disk".
    public var section: String? = nil
    /// For disk targets: the same figure for ``BareManifestStore``, the issue's
    /// manifest-plus-files design built bare on SQLite's C API and measured in the
    /// same rounds: what that design itself costs here, before anything a cache
    /// adds. `nil` where no such floor applies.
    public var floor: Double? = nil

    /// Whether ``floor`` itself misses the limit: the target is out of reach for a
    /// SQLite manifest on this file system, however lean the code around it.
    public var floorMissesLimit: Bool {
        floor.map { !Self.meets($0, comparison, limit) } ?? false
    }

    /// Whether `value` meets `limit` under `comparison` ("<=", "<" or ">=").
    static func meets(_ value: Double, _ comparison: String, _ limit: Double) -> Bool {
        comparison == ">=" ? value >= limit : comparison == "<" ? value < limit : value <= limit
    }

    /// `number` in this target's unit: a ratio, bytes, or a time in µs.
    public func text(_ number: Double) -> String {
        switch unit {
        case "B": return fixed(number, number == number.rounded() ? 0 : 1) + " B"
        case "ns": return fixed(number / 1000, 2) + " µs"
        default: return ratioText(number)
        }
    }
}

extension TargetCheck {
    /// A check whose result follows from `value`, `comparison` and `limit`.
    init(_ target: String, contender: String, value: Double, _ comparison: String, _ limit: Double,
         unit: String = "x", section: String? = nil, floor: Double? = nil) {
        self.init(target: target, contender: contender, value: value, limit: limit, comparison: comparison, unit: unit,
                  passed: Self.meets(value, comparison, limit), section: section, floor: floor)
    }
}

/// One run of the disk section, in one folder.
public struct DiskRun: Sendable, Codable {
    public var directory: String
    public var fileSystem: String
    /// The workloads of small and large values, every contender.
    public var phases: [PhaseResult] = []
    /// The inline-threshold crossover: one workload per value size.
    public var crossover: [PhaseResult] = []
    public var open: [DiskOpenResult] = []
    /// One thread against several writing small values to one DiskCache.
    public var concurrentWrites: ConcurrentWriteResult?
    public var targets: [TargetCheck] = []
    /// What creating one empty file cost on this file system, at the start and at
    /// the end of the section: every file-based contender pays it per write.
    public var fileCreationProbe: FileCreationProbe?
    /// The mount: source, type, options, journal (Linux).
    public var mount: String?

    public init(directory: String, fileSystem: String) {
        self.directory = directory
        self.fileSystem = fileSystem
    }

    /// What the names of this run's charts end with, the `index`th disk run of a
    /// report: nothing for the first, "-2-ext4" for the second. The chart files and
    /// the page's links to them both use it; characters other than letters and
    /// digits in the file system's name become "-".
    public func chartSuffix(index: Int) -> String {
        guard index > 0 else { return "" }
        let name = String(fileSystem.map { $0.isLetter || $0.isNumber ? $0 : "-" })
        return "-\(index + 1)-\(name)"
    }
}

/// Checks the DiskCache issue's targets on one disk run: DiskCache with its
/// default storage kind against the baselines measured in the same rounds.
public func checkDiskTargets(_ run: DiskRun, settings: Settings) -> [TargetCheck] {
    let phases = run.phases
    let cache = DiskCacheStore<DefaultKind>.displayName
    let files = FilePerKeyStore.displayName
    let sqlite = SQLiteStore.displayName
    let manifest = BareManifestStore.displayName
    var checks: [TargetCheck] = []
    func phase(size: Int, _ name: String) -> PhaseResult? {
        phases.first { $0.valueSize == size && $0.phase == name }
    }
    func median(_ phase: PhaseResult?, _ name: String) -> Double? {
        phase?.samples(named: name)?.medianNanosecondsPerOperation
    }
    func add(_ target: String, _ value: Double?, _ comparison: String, _ limit: Double, unit: String = "x", floor: Double?) {
        guard let value else { return }
        checks.append(TargetCheck(target, contender: cache, value: value, comparison, limit, unit: unit, section: "disk",
                                  floor: floor))
    }
    let small = "\(settings.diskSmallValues.formatted()) × \(byteSizeText(settings.diskSmallValueSize))"
    let large = "\(settings.diskLargeValues.formatted()) × \(byteSizeText(settings.diskLargeValueSize))"
    let smallWrite = phase(size: settings.diskSmallValueSize, "write")
    let smallRead = phase(size: settings.diskSmallValueSize, "read-hit")
    /// A target on DiskCache's time ratio to `baseline` in `phase` (inverted for a
    /// speed-up), its floor the same ratio for the bare manifest.
    func addRatio(_ target: String, _ phase: PhaseResult?, against baseline: String, speedUp: Bool, limit: Double) {
        func ratio(_ store: String) -> Double? {
            speedUp ? phase?.timeRatio(baseline, store) : phase?.timeRatio(store, baseline)
        }
        add(target, ratio(cache), speedUp ? ">=" : "<=", limit, floor: ratio(manifest))
    }
    let largeWrite = phase(size: settings.diskLargeValueSize, "write")
    let largeRead = phase(size: settings.diskLargeValueSize, "read-hit")
    addRatio("\(small), write: speed-up over file per key", smallWrite, against: files, speedUp: true, limit: 10)
    addRatio("\(small), read: speed-up over file per key", smallRead, against: files, speedUp: true, limit: 3)
    addRatio("\(small), read: time vs raw SQLite SELECT", smallRead, against: sqlite, speedUp: false, limit: 1.5)
    addRatio("\(small), write: time vs raw SQLite upsert", smallWrite, against: sqlite, speedUp: false, limit: 1.3)
    addRatio("\(large), write: time vs file per key", largeWrite, against: files, speedUp: false, limit: 1.2)
    addRatio("\(large), read: time vs file per key", largeRead, against: files, speedUp: false, limit: 1.2)
    for (label, size) in [(small, settings.diskSmallValueSize), (large, settings.diskLargeValueSize)] {
        let missPhase = phase(size: size, "read-miss")
        add("\(label), a miss: time per miss", median(missPhase, cache), "<", 5_000, unit: "ns",
            floor: median(missPhase, manifest))
    }
    if let writes = run.concurrentWrites, !writes.singleThreadRuns.isEmpty, !writes.multiThreadRuns.isEmpty {
        add("\(writes.threads) threads writing \(byteSizeText(writes.valueSize)) values: throughput over 1 thread",
            writes.speedUp, ">=", 3, floor: nil)
    }
    return checks
}

/// Checks the targets against the memory section's medians.
public func checkTargets(memory: [PhaseResult], footprint: [FootprintResult]) -> [TargetCheck] {
    var checks: [TargetCheck] = []
    func phase(_ name: String) -> PhaseResult? { memory.first { $0.phase == name } }
    for policy in PolicyName.allCases {
        let stash = ContenderKind.stash(policy)
        let name = stash.description
        if let set = phase("set"), let ratio = set.timeRatio(stash, .lockedDictionary) {
            checks.append(TargetCheck("set time vs Dictionary+lock", contender: name, value: ratio, "<=", 1.5))
        }
        for getPhase in ["get-hit", "get-miss"] {
            if let get = phase(getPhase), let ratio = get.timeRatio(stash, .lockedDictionary) {
                checks.append(TargetCheck("\(getPhase) time vs Dictionary+lock", contender: name, value: ratio, "<=", 1.3))
            }
        }
        if let set = phase("set"), let speedup = set.timeRatio(.nsCache, stash) {
            checks.append(TargetCheck("set speed-up over NSCache", contender: name, value: speedup, ">=", 5))
        }
        if let bytes = footprint.first(where: { $0.kind == stash }) {
            checks.append(TargetCheck("memory per entry beyond key+value (\(bytes.entries.formatted()) entries)",
                                      contender: name, value: bytes.medianBytesPerEntryBeyondPayload, "<=",
                                      policy == .s3fifo ? 56 : 48, unit: "B"))
        }
    }
    return checks
}
