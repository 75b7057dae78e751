#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Logging

/// The logger of the memory-pressure machinery. Debug level only: unavailable
/// signals are normal (no PSI, no cgroup), so they are reported once, quietly.
let memoryPressureLogger = Logger(label: "Stash.MemoryPressure")

/// Reads Linux's memory-pressure signals from procfs and cgroupfs.
///
/// - PSI: `some avg10` from `<procRoot>/pressure/memory` (system-wide).
/// - The process's memory cgroup, found once at initialisation from
///   `<procRoot>/self/cgroup` under `cgroupRoot`, falling back to the root of
///   the hierarchy (which, inside a container with a cgroup namespace, *is* the
///   container's cgroup):
///   - v2: `memory.current`, `memory.max` (`"max"` = no limit) and
///     `memory.events` (`high` + `max` + `oom`);
///   - v1: `memory.usage_in_bytes` and `memory.limit_in_bytes`.
///
/// A file that cannot be read or parsed is not an error: its field of the
/// reading is `nil`, and the first failure per file is logged at debug level.
///
/// The parsers are pure functions over the files' text, so tests feed them
/// sample contents.
///
/// Thread-safe. ``read()`` performs a few small reads of kernel pseudo-files,
/// which do not block on I/O.
final class LinuxMemoryPressureSource: MemoryPressureSource, Sendable {

    /// The PSI file, `<procRoot>/pressure/memory`.
    let psiPath: String
    /// The process's memory cgroup files, or `nil` when none was found.
    let cgroupFiles: CgroupMemoryFiles?

    /// The files whose failure was logged already: each is logged once.
    private let reportedFailures = LockedValue<Set<String>>([])

    /// Locates the files to read. Reads `<procRoot>/self/cgroup` and checks
    /// which cgroup files are readable; does not read any signal yet.
    ///
    /// - Parameters:
    ///   - procRoot: Where procfs is mounted. Defaults to `/proc`.
    ///   - cgroupRoot: Where cgroupfs is mounted. Defaults to `/sys/fs/cgroup`.
    init(procRoot: String = "/proc", cgroupRoot: String = "/sys/fs/cgroup") {
        psiPath = procRoot + "/pressure/memory"
        cgroupFiles = Self.locateCgroupMemoryFiles(
            procSelfCgroup: readSmallFile(atPath: procRoot + "/self/cgroup"),
            cgroupRoot: cgroupRoot,
            isReadable: { access($0, R_OK) == 0 }
        )
        if let files = cgroupFiles {
            memoryPressureLogger.debug(
                "watching memory cgroup",
                metadata: ["version": "\(files.version)", "directory": "\(files.directory)"]
            )
        } else {
            memoryPressureLogger.debug("no readable memory cgroup", metadata: ["root": "\(cgroupRoot)"])
        }
    }

    /// Reads PSI and the cgroup files once.
    ///
    /// - Complexity: O(1): at most four reads of small kernel pseudo-files.
    func read() -> MemoryPressureReading {
        var reading = MemoryPressureReading()
        reading.psiSomeAvg10 = sample(psiPath, Self.parsePSISomeAvg10)
        guard let files = cgroupFiles else { return reading }
        reading.cgroupUsageBytes = sample(files.usagePath, Self.parseCgroupBytes)
        let parseLimit = files.version == .v2 ? Self.parseCgroupV2Limit : Self.parseCgroupV1Limit
        if case .bytes(let limit) = sample(files.limitPath, parseLimit) {
            reading.cgroupLimitBytes = limit
        }
        if let eventsPath = files.eventsPath {
            reading.cgroupEventCount = sample(eventsPath, Self.parseMemoryEvents)
        }
        return reading
    }

    /// Reads and parses one file; on failure logs once per path and returns `nil`.
    private func sample<Value>(_ path: String, _ parse: (String) -> Value?) -> Value? {
        guard let text = readSmallFile(atPath: path) else {
            reportOnce(path, "cannot read")
            return nil
        }
        guard let value = parse(text) else {
            reportOnce(path, "cannot parse")
            return nil
        }
        return value
    }

    private func reportOnce(_ path: String, _ problem: String) {
        let isFirst = reportedFailures.withLock { $0.insert(path).inserted }
        if isFirst {
            memoryPressureLogger.debug(
                "memory-pressure signal unavailable; ignoring it",
                metadata: ["file": "\(path)", "problem": "\(problem)"]
            )
        }
    }
}

// MARK: - Locating the cgroup

/// The cgroup hierarchy version of a memory cgroup.
enum CgroupVersion: Equatable, Sendable {
    /// The legacy per-controller hierarchy (`/sys/fs/cgroup/memory/...`).
    case v1
    /// The unified hierarchy (`/sys/fs/cgroup/...`).
    case v2
}

/// The files of one memory cgroup.
struct CgroupMemoryFiles: Equatable, Sendable {
    /// Which hierarchy the directory belongs to; decides the file names.
    var version: CgroupVersion
    /// The cgroup's directory, without a trailing slash.
    var directory: String

    /// Current usage: `memory.current` (v2) or `memory.usage_in_bytes` (v1).
    var usagePath: String {
        directory + (version == .v2 ? "/memory.current" : "/memory.usage_in_bytes")
    }

    /// The limit: `memory.max` (v2) or `memory.limit_in_bytes` (v1).
    var limitPath: String {
        directory + (version == .v2 ? "/memory.max" : "/memory.limit_in_bytes")
    }

    /// `memory.events` (v2); `nil` for v1, which has no such file.
    var eventsPath: String? {
        version == .v2 ? directory + "/memory.events" : nil
    }
}

/// One line of `/proc/self/cgroup`: `hierarchy-ID:controller-list:cgroup-path`.
struct CgroupMembership: Equatable, Sendable {
    /// 0 for the v2 unified hierarchy.
    var hierarchyID: Int
    /// The v1 controllers bound to the hierarchy; empty for v2.
    var controllers: [String]
    /// The cgroup's path relative to the hierarchy's mount, starting with `/`.
    var path: String
}

extension LinuxMemoryPressureSource {
    /// Finds the memory cgroup of the process.
    ///
    /// If a v1 hierarchy has the `memory` controller, that wins (on hybrid
    /// systems the v2 hierarchy exists but has no memory controller); otherwise
    /// the v2 (`0::`) entry is used. For the chosen version it tries the
    /// process's own cgroup directory, then the hierarchy's root, and keeps the
    /// first whose usage file is readable. With no usable `/proc/self/cgroup`
    /// it tries the roots of both versions.
    ///
    /// - Parameters:
    ///   - procSelfCgroup: The text of `/proc/self/cgroup`, or `nil` if unreadable.
    ///   - cgroupRoot: Where cgroupfs is mounted, e.g. `/sys/fs/cgroup`.
    ///   - isReadable: Whether a file can be read; injected so tests need no files.
    /// - Returns: The files to read, or `nil` when no memory cgroup is readable.
    static func locateCgroupMemoryFiles(
        procSelfCgroup: String?,
        cgroupRoot: String,
        isReadable: (String) -> Bool
    ) -> CgroupMemoryFiles? {
        let root = trimmingTrailingSlashes(cgroupRoot)
        let memberships = procSelfCgroup.map(parseProcSelfCgroup) ?? []
        let v1Entry = memberships.first { $0.hierarchyID != 0 && $0.controllers.contains("memory") }
        let v2Entry = memberships.first { $0.hierarchyID == 0 && $0.controllers.isEmpty }

        func candidates(_ version: CgroupVersion, _ entry: CgroupMembership?) -> [CgroupMemoryFiles] {
            let base = version == .v1 ? root + "/memory" : root
            var directories: [String] = []
            // A path with ".." lies outside our cgroup namespace's view: only the root is visible.
            if let entry, entry.path != "/", !entry.path.split(separator: "/").contains("..") {
                directories.append(base + trimmingTrailingSlashes(entry.path))
            }
            directories.append(base)
            return directories.map { CgroupMemoryFiles(version: version, directory: $0) }
        }

        let ordered: [CgroupMemoryFiles]
        if let v1Entry {
            ordered = candidates(.v1, v1Entry)
        } else if let v2Entry {
            ordered = candidates(.v2, v2Entry)
        } else {
            ordered = candidates(.v2, nil) + candidates(.v1, nil)
        }
        return ordered.first { isReadable($0.usagePath) }
    }

    private static func trimmingTrailingSlashes(_ path: String) -> String {
        var path = Substring(path)
        while path.count > 1, path.hasSuffix("/") { path = path.dropLast() }
        return String(path)
    }
}

// MARK: - Parsers (pure)

/// A cgroup memory limit as read from its file.
enum CgroupMemoryLimit: Equatable, Sendable {
    /// No limit: v2 `"max"`, or a v1 value near `Int64.max`.
    case unlimited
    /// A limit in bytes.
    case bytes(Int64)
}

extension LinuxMemoryPressureSource {
    /// Limits at or above this (4 EiB) are "no limit". cgroup v1 reports an
    /// unset limit as `Int64.max` rounded down to a page, e.g. 9223372036854771712.
    static let unlimitedThreshold: Int64 = 1 << 62

    /// Parses `some avg10` from a PSI file such as `/proc/pressure/memory`:
    ///
    ///     some avg10=0.12 avg60=0.05 avg300=0.00 total=12345
    ///     full avg10=0.00 avg60=0.00 avg300=0.00 total=6789
    ///
    /// - Returns: The percentage (0–100), or `nil` when there is no well-formed
    ///   `some` line with a finite, non-negative `avg10`.
    /// - Complexity: O(n) in the length of `text`.
    static func parsePSISomeAvg10(_ text: String) -> Double? {
        for line in text.split(whereSeparator: \.isNewline) {
            let fields = line.split(whereSeparator: \.isWhitespace)
            guard fields.first == "some" else { continue }
            for field in fields.dropFirst() {
                let pair = field.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard pair.count == 2, pair[0] == "avg10" else { continue }
                guard let value = Double(pair[1]), value.isFinite, value >= 0 else { return nil }
                return value
            }
            return nil
        }
        return nil
    }

    /// Parses a file holding one non-negative byte count, such as
    /// `memory.current` or `memory.usage_in_bytes` (`"404852736\n"`).
    ///
    /// - Returns: The count, or `nil` if the text is not a single non-negative integer.
    static func parseCgroupBytes(_ text: String) -> Int64? {
        guard let value = Int64(trimmingWhitespace(text)), value >= 0 else { return nil }
        return value
    }

    /// Parses v2 `memory.max`: `"max"` or a byte count.
    static func parseCgroupV2Limit(_ text: String) -> CgroupMemoryLimit? {
        if trimmingWhitespace(text) == "max" { return .unlimited }
        return parseCgroupBytes(text).map(limit(fromBytes:))
    }

    /// Parses v1 `memory.limit_in_bytes`: a byte count, where a value near
    /// `Int64.max` (at least ``unlimitedThreshold``) means no limit.
    static func parseCgroupV1Limit(_ text: String) -> CgroupMemoryLimit? {
        parseCgroupBytes(text).map(limit(fromBytes:))
    }

    private static func limit(fromBytes bytes: Int64) -> CgroupMemoryLimit {
        bytes >= unlimitedThreshold ? .unlimited : .bytes(bytes)
    }

    /// Parses v2 `memory.events` and sums the counters that mean the cgroup
    /// ran out of room: `high` (throttled over `memory.high`), `max` (hit
    /// `memory.max`, reclaim forced) and `oom` (allocation failed).
    ///
    ///     low 0
    ///     high 12
    ///     max 3
    ///     oom 0
    ///     oom_kill 0
    ///
    /// - Returns: The sum, or `nil` when none of the three keys is present or
    ///   one of them has a malformed value.
    static func parseMemoryEvents(_ text: String) -> UInt64? {
        var sum: UInt64 = 0
        var found = false
        for line in text.split(whereSeparator: \.isNewline) {
            let fields = line.split(whereSeparator: \.isWhitespace)
            guard fields.count == 2, ["high", "max", "oom"].contains(fields[0]) else { continue }
            guard let count = UInt64(fields[1]) else { return nil }
            sum &+= count
            found = true
        }
        return found ? sum : nil
    }

    /// Parses `/proc/self/cgroup`. v1 lines look like `4:memory:/user.slice`
    /// (or `4:cpu,cpuacct:/`), the v2 line like `0::/user.slice/session-1.scope`.
    /// Malformed lines are skipped.
    ///
    /// - Complexity: O(n) in the length of `text`.
    static func parseProcSelfCgroup(_ text: String) -> [CgroupMembership] {
        text.split(whereSeparator: \.isNewline).compactMap { line in
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, let id = Int(parts[0]), id >= 0, parts[2].hasPrefix("/") else { return nil }
            let controllers = parts[1].split(separator: ",").map(String.init)
            return CgroupMembership(hierarchyID: id, controllers: controllers, path: String(parts[2]))
        }
    }

    private static func trimmingWhitespace(_ text: String) -> Substring {
        var text = Substring(text)
        while let first = text.first, first.isWhitespace { text = text.dropFirst() }
        while let last = text.last, last.isWhitespace { text = text.dropLast() }
        return text
    }
}

// MARK: - Reading files

/// Reads a small file (a kernel pseudo-file) whole, with plain POSIX calls.
///
/// Pseudo-files report a size of 0, so this reads until end of file rather
/// than trusting `stat`. Stops after `limit` bytes.
///
/// - Returns: The contents decoded as UTF-8, or `nil` if the file cannot be
///   opened or read.
func readSmallFile(atPath path: String, limit: Int = 64 * 1024) -> String? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var contents: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1024)
    while contents.count < limit {
        let result = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if result > 0 {
            contents += chunk[..<result]
        } else if result == 0 {
            break
        } else if errno != EINTR {
            return nil
        }
    }
    return String(decoding: contents.prefix(limit), as: UTF8.self)
}
