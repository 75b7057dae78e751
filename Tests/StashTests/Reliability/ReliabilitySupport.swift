import Foundation
import Logging
import StashTestSupport
import Testing
@testable import Stash

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Shared by the reliability suites: self-describing values, the stash-stress child
// process, scaling, and the post-mortem checks of a cache directory.

// MARK: - Scale and sanitizers

enum Reliability {
    /// `STASH_RELIABILITY_SCALE` (default 1): multiplies the heavy tests' sizes for
    /// a long local run, e.g. `STASH_RELIABILITY_SCALE=10 swift test --filter Reliability`.
    static let scale: Int = {
        guard let text = ProcessInfo.processInfo.environment["STASH_RELIABILITY_SCALE"], let value = Int(text), value > 0
        else { return 1 }
        return value
    }()

    /// A time limit of `base` minutes, scaled like the tests' sizes.
    static func minutes(_ base: Int) -> Int { base * scale }

    /// Whether this process runs under the thread sanitizer (about 5–15× slower).
    static let underThreadSanitizer = dlsym(defaultHandle, "__tsan_init") != nil
    /// Whether this process runs under the address sanitizer (about 2–3× slower).
    static let underAddressSanitizer = dlsym(defaultHandle, "__asan_init") != nil

    /// Whether a sanitizer slows this process down.
    static var underSanitizer: Bool { underThreadSanitizer || underAddressSanitizer }

    /// `RTLD_DEFAULT`.
    private static var defaultHandle: UnsafeMutableRawPointer? {
        #if canImport(Darwin)
        UnsafeMutableRawPointer(bitPattern: -2)
        #else
        nil
        #endif
    }
}

// MARK: - Blocking work off the cooperative pool

// Swift Testing runs tests on Swift's cooperative pool: one thread per core, two on
// this machine. A test that blocks (on a child's output, on eight worker threads)
// would hold one of them, and starve every other test, for as long as it blocks.
// These helpers block a thread of their own instead, and the test awaits them.
// Bodies run off the test's task, so they report problems by their result, never
// with #expect.

/// Runs `body` on a new thread and returns its result.
func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.stackSize = 4 << 20
        thread.start()
    }
}

/// Runs `body(index)` on `count` new threads at once and returns when all are done.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            let thread = Thread {
                body(index)
                group.leave()
            }
            thread.stackSize = 4 << 20
            thread.start()
        }
        group.notify(queue: .global()) { continuation.resume() }
    }
}

// MARK: - The stash-stress child process

struct ReliabilityError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The `stash-stress` executable, built by SwiftPM with the package's other
/// executables before `swift test` runs, next to the test bundle in the same
/// build directory (whatever `--scratch-path` is, e.g. `.build-tsan/debug/`).
/// `STASH_STRESS_BINARY` overrides it.
func stressBinaryPath() throws -> String {
    if let path = ProcessInfo.processInfo.environment["STASH_STRESS_BINARY"] { return path }
    var candidates: [String] = []
    // The running test executable (on Linux, `<build>/debug/StashPackageTests.xctest`).
    if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
        candidates.append((executable as NSString).deletingLastPathComponent)
    }
    candidates.append((CommandLine.arguments[0] as NSString).deletingLastPathComponent)
    #if canImport(Darwin)
    // On macOS the bundle is a directory inside the build directory. (Not on Linux:
    // there Bundle.allBundles leaks its arrays, which the address sanitizer reports.)
    for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
        candidates.append((bundle.bundlePath as NSString).deletingLastPathComponent)
    }
    #endif
    // The package's default build directory, from this file's path.
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path
    candidates.append("\(root)/.build/debug")
    for directory in candidates {
        let path = "\(directory)/stash-stress"
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    throw ReliabilityError("stash-stress not found next to the tests (looked in \(candidates)); run `swift build` first")
}

/// A running `stash-stress`: its stdout is a pipe read line by line, its stderr a file.
final class StressChild: @unchecked Sendable {
    // @unchecked Sendable: used by one thread at a time (the test, or the one
    // thread it hands the child to with offThePool while it waits).
    let pid: pid_t
    private let output: Int32
    private var buffer: [UInt8] = []
    private var finished = false
    let stderrPath: String
    private(set) var status: Int32?

    /// Starts `stash-stress` with `arguments`; its stderr goes to `stderrPath`.
    init(_ arguments: [String], stderrPath: String) throws {
        let binary = try stressBinaryPath()
        self.stderrPath = stderrPath
        // Children are started one at a time, and both ends of the pipe are
        // close-on-exec, so that a child started by another test never inherits this
        // pipe (its reader would then never see end-of-file).
        childSpawnLock.lock()
        defer { childSpawnLock.unlock() }
        let pipe = try makeChildPipe()
        defer { close(pipe.write) }
        do {
            pid = try spawnChild(binary, arguments) { actions in
                posix_spawn_file_actions_adddup2(&actions, pipe.write, 1)
                posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)
                posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            }
        } catch {
            close(pipe.read)
            throw ReliabilityError("posix_spawn \(binary) failed: \(error)")
        }
        output = pipe.read
    }

    deinit {
        if status == nil {
            kill(pid, SIGKILL)
            _ = try? wait()
        }
        close(output)
    }

    /// The next whole line of output, or `nil` at end of file (a partial last line,
    /// cut by a kill, is dropped).
    func readLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            if finished { return nil }
            fillBuffer()
        }
    }

    /// What ``next(watching:)`` saw first.
    enum Event: Equatable {
        /// A whole line of output.
        case line(String)
        /// This many file-system events on the watched directories.
        case fileEvents(Int)
        /// End of the output: the child has exited.
        case end
    }

    /// The next line of output or batch of file-system events, whichever comes
    /// first. `watcher` is a ``DirectoryWatcher``'s descriptor, or `nil` for lines only.
    func next(watching watcher: DirectoryWatcher?) -> Event {
        guard let watcher else { return readLine().map(Event.line) ?? .end }
        while true {
            if buffer.contains(UInt8(ascii: "\n")) || finished { return readLine().map(Event.line) ?? .end }
            var fds = [pollfd(fd: output, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: watcher.descriptor, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 2, Self.silenceLimitMilliseconds)
            if ready == 0 {
                killForSilence()
                continue
            }
            if ready < 0 {
                if errno == EINTR { continue }
                return readLine().map(Event.line) ?? .end
            }
            if fds[1].revents & Int16(POLLIN) != 0 {
                let count = watcher.readEvents()
                if count > 0 { return .fileEvents(count) }
            }
            if fds[0].revents != 0 {
                fillBuffer()
            }
        }
    }

    /// How long the child may print nothing before it is taken for hung: ``defaultWaitTimeout``.
    private static let silenceLimitMilliseconds = Int32(defaultWaitTimeout.components.seconds * 1000)

    /// The child printed nothing for ``silenceLimitMilliseconds``: it is killed, so that its
    /// output ends and every read and wait returns, and the test fails instead of hanging.
    private func killForSilence() {
        Issue.record("stash-stress (pid \(pid)) printed nothing for \(defaultWaitTimeout); killed it")
        kill(pid, SIGKILL)
    }

    /// One read(2) of output into the buffer, after at most ``defaultWaitTimeout`` of waiting
    /// for it.
    private func fillBuffer() {
        do {
            try waitUntilReadable(output)
        } catch {
            killForSilence()
        }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
        if count < 0 {
            if errno != EINTR { finished = true }
        } else if count == 0 {
            finished = true
        } else {
            buffer += chunk[..<count]
        }
    }

    /// Every remaining line, then waits for the child to exit; off the pool.
    func finish() async -> [String] {
        await offThePool { [self] in
            let lines = readRemainingLines()
            _ = try? wait()
            return lines
        }
    }

    /// Every remaining whole line until end of file.
    func readRemainingLines() -> [String] {
        var lines: [String] = []
        while let line = readLine() { lines.append(line) }
        return lines
    }

    /// Sends SIGKILL.
    func killNow() {
        kill(pid, SIGKILL)
    }

    /// Waits for the child to exit; returns the raw wait status.
    @discardableResult
    func wait() throws -> Int32 {
        if let status { return status }
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 {
            if errno != EINTR { throw ReliabilityError("waitpid failed: errno \(errno)") }
        }
        status = raw
        return raw
    }

    /// Whether the child exited normally with status 0.
    var exitedCleanly: Bool { status.map { WaitStatus(raw: $0).exitedCleanly } ?? false }

    /// Whether the child was ended by SIGKILL.
    var wasKilled: Bool { status.map { WaitStatus(raw: $0).signal == SIGKILL } ?? false }

    /// The child's stderr so far, for failure messages.
    var standardError: String {
        (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
    }
}

/// Watches directories for the file-system events a cache's writes cause (Linux
/// inotify: files created, written, closed, renamed in or deleted), so a test can
/// kill a child at a chosen step of a write, not at a chosen time.
final class DirectoryWatcher: @unchecked Sendable {
    // @unchecked Sendable: used by one thread at a time, like StressChild.
    let descriptor: Int32

    /// Watches `paths` (which must exist), or returns `nil` where inotify is missing.
    init?(_ paths: [String]) {
        #if os(Linux)
        descriptor = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard descriptor >= 0 else { return nil }
        let mask = UInt32(IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE)
        for path in paths where inotify_add_watch(descriptor, path, mask) < 0 {
            close(descriptor)
            return nil
        }
        #else
        return nil
        #endif
    }

    deinit {
        close(descriptor)
    }

    /// Reads the pending events; returns how many there were.
    func readEvents() -> Int {
        var buffer = [UInt8](repeating: 0, count: 16_384)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return 0 }
        // struct inotify_event: wd, mask, cookie, len (4 bytes each), then len bytes of name.
        var events = 0
        var offset = 0
        while offset + 16 <= count {
            let length = (0..<4).reduce(0) { $0 | Int(buffer[offset + 12 + $1]) << (8 * $1) }
            offset += 16 + length
            events += 1
        }
        return events
    }
}

// MARK: - Checking a cache directory after the fact

/// A `KVStorage` for post-mortem checks: the orphan grace period is zero, so the
/// consistency check removes every unreferenced file however young. Only safe when
/// no other process is writing to the directory.
func openCheckingStorage(_ directory: String, logger: Logger = Logger(label: "reliability.check")) throws -> KVStorage {
    var options = KVStorageOptions()
    options.orphanGracePeriod = .zero
    return try KVStorage(directory: directory, clock: WallClock(), logger: logger, options: options)
}

/// What the manifest really holds, counted row by row (not from `manifest_totals`).
struct FullCount: Equatable, CustomStringConvertible {
    var count: Int
    var size: Int
    var fileCount: Int
    var description: String { "count \(count), size \(size), files \(fileCount)" }
}

extension KVStorage {
    /// Counts the manifest's rows one by one.
    func fullCount() throws -> FullCount {
        let connection = try requireConnection()
        return try connection.withStatement(
            "SELECT count(*), coalesce(sum(size), 0), count(filename) FROM manifest"
        ) { statement throws(SQLiteError) in
            _ = try statement.step()
            return FullCount(
                count: Int(statement.int64(at: 0)), size: Int(statement.int64(at: 1)), fileCount: Int(statement.int64(at: 2)))
        }
    }

    /// The file names that rows refer to.
    func referencedFiles() throws -> Set<String> {
        let connection = try requireConnection()
        return try connection.withStatement("SELECT filename FROM manifest WHERE filename IS NOT NULL") { statement throws(SQLiteError) in
            var names = Set<String>()
            while try statement.step() == .row {
                if let name = statement.text(at: 0) { names.insert(name) }
            }
            return names
        }
    }

    /// Every key in the manifest.
    func allKeys() throws -> [String] {
        let connection = try requireConnection()
        return try connection.withStatement("SELECT key FROM manifest") { statement throws(SQLiteError) in
            var keys: [String] = []
            while try statement.step() == .row {
                if let key = statement.text(at: 0) { keys.append(key) }
            }
            return keys
        }
    }
}

/// The names in `<directory>/data`, hidden ones included.
func dataDirectoryEntries(_ directory: String) -> Set<String> {
    Set((try? FileManager.default.contentsOfDirectory(atPath: "\(directory)/data")) ?? [])
}

/// Checks a cache directory nobody is writing to: the manifest opens, a consistency
/// check with a zero grace period finds no row without its file and no damage, and
/// afterwards `data/` holds exactly the files rows refer to, and the totals equal a
/// full count. Returns the check's report (the orphan files it removed).
@discardableResult
func expectConsistentDirectory(
    _ directory: String, allowOrphans: Bool, sourceLocation: SourceLocation = #_sourceLocation
) throws -> RepairReport {
    let storage = try openCheckingStorage(directory)
    defer { storage.close() }
    let report = try storage.checkConsistency()
    #expect(!report.manifestReset, "manifest reset: \(report)", sourceLocation: sourceLocation)
    #expect(report.missingFileEntriesRemoved == 0, "rows lost their files: \(report)", sourceLocation: sourceLocation)
    #expect(report.damagedEntriesRemoved == 0, "damaged entries: \(report)", sourceLocation: sourceLocation)
    #expect(report.unexpectedEntriesRemoved == 0, "unexpected entries: \(report)", sourceLocation: sourceLocation)
    #expect(!report.totalsCorrected, "totals drifted: \(report)", sourceLocation: sourceLocation)
    if !allowOrphans {
        #expect(report.isClean, "\(report)", sourceLocation: sourceLocation)
    }
    let files = dataDirectoryEntries(directory)
    let referenced = try storage.referencedFiles()
    #expect(files == referenced,
            "data/ holds \(files.subtracting(referenced).sorted()) unreferenced, misses \(referenced.subtracting(files).sorted())",
            sourceLocation: sourceLocation)
    let totals = try storage.totals()
    let full = try storage.fullCount()
    #expect(FullCount(count: totals.count, size: totals.size, fileCount: totals.fileCount) == full,
            "totals \(totals) vs full count \(full)", sourceLocation: sourceLocation)
    #expect(try storage.checkConsistency().isClean, "a second check is clean", sourceLocation: sourceLocation)
    return report
}
