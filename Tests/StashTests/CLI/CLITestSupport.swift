import Foundation
import Logging
import Stash
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What one run of the `stash` executable produced.
struct CLIResult {
    var status: Int32
    var stdout: Data
    var stderr: String

    var output: String { String(decoding: stdout, as: UTF8.self) }
    /// Standard error's lines, without the empty one after the last line break.
    var errorLines: [Substring] { stderr.split(separator: "\n") }
}

/// Runs the built `stash` executable as a subprocess.
enum StashTool {
    /// The longest a run may take before it is killed and the test fails.
    /// Generous: the machine may be busy compiling.
    static let timeout: DispatchTimeInterval = .seconds(60)

    /// The `stash` binary that SwiftPM built beside the test bundle: the
    /// products directory holds both (`.build/<triple>/debug/`, or the
    /// `--scratch-path` one). `STASH_EXECUTABLE` overrides it.
    static let executable: String? = {
        let fileManager = FileManager.default
        var candidates: [String] = []
        if let override = ProcessInfo.processInfo.environment["STASH_EXECUTABLE"] {
            candidates.append(override)
        }
        // Linux: the test bundle is the running executable. Apple platforms:
        // a .xctest bundle loaded by a runner.
        if let main = Bundle.main.executableURL {
            candidates.append(main.deletingLastPathComponent().appendingPathComponent("stash").path)
        }
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            candidates.append(bundle.bundleURL.deletingLastPathComponent().appendingPathComponent("stash").path)
        }
        // The package's default build directory, from this file's path.
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        candidates.append(root.appendingPathComponent(".build/debug/stash").path)
        return candidates.first { fileManager.isExecutableFile(atPath: $0) }
    }()

    /// Runs `stash arguments`, feeding `stdin` (nothing, at once closed, by
    /// default), and collects the exit status and both outputs. With
    /// `stderrTerminal`, standard error is a pseudo-terminal, and what the tool
    /// writes there is returned in `stderr`.
    static func run(
        _ arguments: [String], stdin: Data = Data(), stderrTerminal: Bool = false,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> CLIResult {
        let executable = try #require(
            executable, "the stash executable was not found beside the test bundle; run `swift build` first",
            sourceLocation: sourceLocation)
        // Every descriptor is close-on-exec in this process (tests run in
        // parallel, and a child must not inherit another test's pipes); dup2
        // onto 0, 1 and 2 clears that flag in the child.
        childSpawnLock.lock()
        var locked = true
        defer { if locked { childSpawnLock.unlock() } }
        let input = try makeChildPipe()
        let output = try makeChildPipe()
        var terminal: PseudoTerminal?
        let errorRead: Int32
        let errorWrite: Int32
        if stderrTerminal {
            let pty = try PseudoTerminal()
            (errorRead, errorWrite) = (pty.primary, pty.secondary)
            terminal = pty
        } else {
            (errorRead, errorWrite) = try makeChildPipe()
        }

        let spawned = Result {
            try spawnChild(executable, arguments) { actions in
                posix_spawn_file_actions_adddup2(&actions, input.read, 0)
                posix_spawn_file_actions_adddup2(&actions, output.write, 1)
                posix_spawn_file_actions_adddup2(&actions, errorWrite, 2)
            }
        }
        close(input.read)
        close(output.write)
        if let terminal {
            // The parent's copy of the terminal's secondary side: closed, so that
            // reading the primary side ends (EIO) when the child exits.
            terminal.closeSecondary()
        } else {
            close(errorWrite)
        }
        childSpawnLock.unlock()
        locked = false
        let child: pid_t
        do {
            child = try spawned.get()
        } catch {
            close(input.write)
            close(output.read)
            if terminal == nil { close(errorRead) }
            terminal?.closePrimary()
            throw error
        }

        let outputReader = OutputReader(descriptor: output.read)
        let errorReader = OutputReader(descriptor: errorRead)
        outputReader.start()
        errorReader.start()
        // The child may exit without reading: a broken pipe is not an error
        // (SIGPIPE is ignored from here on, so write reports EPIPE).
        _ = ignoreBrokenPipes
        stdin.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(input.write, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { break }
                offset += written
            }
        }
        close(input.write)

        let exit = ChildExit(pid: child)
        if !exit.wait(timeout: timeout) {
            kill(child, SIGKILL)
            _ = exit.wait(timeout: .seconds(5))
            Issue.record("stash \(arguments.joined(separator: " ")) did not exit within \(timeout)", sourceLocation: sourceLocation)
        }
        let stdout = outputReader.finish()
        let stderr = errorReader.finish()
        close(output.read)
        if let terminal { terminal.closePrimary() } else { close(errorRead) }
        return CLIResult(status: exit.status, stdout: stdout, stderr: String(decoding: stderr, as: UTF8.self))
    }
}

/// Ignores SIGPIPE in this test process, once: a write to a child that exited
/// without reading its input then fails with EPIPE instead of killing the process
/// that runs every test. (The test runner does not ignore it by itself.)
private let ignoreBrokenPipes: Void = {
    signal(SIGPIPE, SIG_IGN)
}()

/// Waits for a child process on a background queue, so the test can wait for
/// its exit with a time limit.
final class ChildExit: @unchecked Sendable {
    // @unchecked Sendable: `exitStatus` is written once by the waiting queue
    // before `exited` is signalled, and read only after.
    private let exited = DispatchSemaphore(value: 0)
    private var exitStatus: Int32 = -1

    init(pid: pid_t) {
        DispatchQueue.global().async { [self] in
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            exitStatus = WaitStatus(raw: status).code
            exited.signal()
        }
    }

    /// Whether the child exited within `timeout`.
    func wait(timeout: DispatchTimeInterval) -> Bool {
        exited.wait(timeout: .now() + timeout) == .success
    }

    /// The exit status, or 128 + the signal that ended the child.
    var status: Int32 { exitStatus }
}

/// Reads a file descriptor to its end on a thread of its own, so that a child
/// never blocks on a full pipe.
final class OutputReader: @unchecked Sendable {
    // @unchecked Sendable: `data` is written by the reading thread only, and
    // read after `done` has been signalled.
    private let descriptor: Int32
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    func start() {
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    data.append(contentsOf: buffer[..<count])
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    break  // end of file, or EIO: the terminal's other side is closed
                }
            }
            done.signal()
        }
    }

    /// Waits for the end of the output (bounded) and returns it.
    func finish() -> Data {
        if done.wait(timeout: .now() + StashTool.timeout) == .timedOut {
            Issue.record("the output did not end")
        }
        return data
    }
}

/// A pseudo-terminal pair: the tool writes to the secondary side, which is a
/// terminal for `isatty`; the test reads from the primary side.
final class PseudoTerminal {
    let primary: Int32
    private(set) var secondary: Int32

    init() throws {
        // grantpt, unlockpt and ptsname_r are in every libc, but Swift's Glibc
        // module does not declare them: look them up at run time.
        typealias DescriptorFunction = @convention(c) (Int32) -> Int32
        typealias NameFunction = @convention(c) (Int32, UnsafeMutablePointer<CChar>?, Int) -> Int32
        func function<T>(_ name: String, _: T.Type) throws -> T {
            guard let handle = dlopen(nil, RTLD_NOW), let pointer = dlsym(handle, name) else {
                throw POSIXError(.ENOSYS)
            }
            return unsafeBitCast(pointer, to: T.self)
        }
        let grant = try function("grantpt", DescriptorFunction.self)
        let unlock = try function("unlockpt", DescriptorFunction.self)
        let name = try function("ptsname_r", NameFunction.self)

        primary = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard primary >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var path = [CChar](repeating: 0, count: 128)
        guard grant(primary) == 0, unlock(primary) == 0, name(primary, &path, path.count) == 0 else {
            let code = errno
            close(primary)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
        secondary = path.withUnsafeBufferPointer { open($0.baseAddress!, O_RDWR | O_NOCTTY | O_CLOEXEC) }
        guard secondary >= 0 else {
            let code = errno
            close(primary)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
    }

    func closeSecondary() {
        if secondary >= 0 {
            close(secondary)
            secondary = -1
        }
    }

    func closePrimary() {
        close(primary)
    }
}

/// A cache directory for one test, with helpers that work on it in process.
struct CLIFixture {
    let temporary: TemporaryDirectory
    /// The cache directory (not created).
    let cache: String

    init() throws {
        temporary = try TemporaryDirectory()
        cache = temporary.appending("cache")
    }

    /// Runs `stash` with `arguments`, where `"$CACHE"` stands for the cache directory.
    func stash(_ arguments: String..., stdin: Data = Data(), sourceLocation: SourceLocation = #_sourceLocation) throws -> CLIResult {
        try StashTool.run(arguments.map { $0 == "$CACHE" ? cache : $0 }, stdin: stdin, sourceLocation: sourceLocation)
    }

    /// Writes `count` values of `size` bytes, keyed `key-0`..., through the library.
    func seed(count: Int, size: Int = 10, keyPrefix: String = "key-") throws {
        let disk = try DiskCache<Data>(
            directory: cache,
            configuration: .init(autoTrimInterval: nil, logger: LogRecorder().logger))
        defer { disk.close() }
        for index in 0..<count {
            try disk.setValue(Data(repeating: UInt8(truncatingIfNeeded: index), count: size), forKey: "\(keyPrefix)\(index)")
        }
    }

    /// The names in the cache's `data/` directory.
    func dataFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "\(cache)/data").sorted()
    }
}
