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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output

        let errorReader: OutputReader
        var terminal: PseudoTerminal?
        if stderrTerminal {
            let pty = try PseudoTerminal()
            process.standardError = FileHandle(fileDescriptor: pty.secondary, closeOnDealloc: false)
            errorReader = OutputReader(descriptor: pty.primary)
            terminal = pty
        } else {
            let error = Pipe()
            process.standardError = error
            errorReader = OutputReader(descriptor: error.fileHandleForReading.fileDescriptor)
        }
        let outputReader = OutputReader(descriptor: output.fileHandleForReading.fileDescriptor)

        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        // The parent's copy of the terminal's secondary side: closed, so that
        // reading the primary side ends (EIO) when the child exits. (`Process`
        // closes the parent's copies of the pipes' child ends itself.)
        terminal?.closeSecondary()
        outputReader.start()
        errorReader.start()
        // The child may exit without reading: ignore a broken pipe.
        try? input.fileHandleForWriting.write(contentsOf: stdin)
        try? input.fileHandleForWriting.close()

        if exited.wait(timeout: .now() + timeout) == .timedOut {
            process.terminate()
            _ = exited.wait(timeout: .now() + .seconds(5))
            Issue.record("stash \(arguments.joined(separator: " ")) did not exit within \(timeout)", sourceLocation: sourceLocation)
        }
        let stdout = outputReader.finish()
        let stderr = errorReader.finish()
        terminal?.closePrimary()
        return CLIResult(status: process.terminationStatus, stdout: stdout, stderr: String(decoding: stderr, as: UTF8.self))
    }
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

        primary = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        guard primary >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var path = [CChar](repeating: 0, count: 128)
        guard grant(primary) == 0, unlock(primary) == 0, name(primary, &path, path.count) == 0 else {
            let code = errno
            close(primary)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
        secondary = path.withUnsafeBufferPointer { open($0.baseAddress!, O_RDWR | O_NOCTTY) }
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
        let disk = try DiskCache<Data>(directory: cache, autoTrimInterval: nil, logger: LogRecorder().logger)
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
