#if Redis
import Foundation
import StashRedis
import StashTestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A real `redis-server` on 127.0.0.1 and a free port, in its own temporary
/// directory, with persistence off; stopped by ``stop()`` or at deinit.
final class RedisServerProcess: @unchecked Sendable {
    // @unchecked Sendable: `process` is only touched by the test that owns the
    // server (start, kill, stop run sequentially in one test); the rest is immutable.
    let port: Int
    let directory: URL
    let extraArguments: [String]
    private var process: Process?

    static var isAvailable: Bool { executablePath("redis-server") != nil }

    static func executablePath(_ name: String) -> String? {
        for directory in ["/usr/bin", "/usr/local/bin", "/usr/sbin", "/opt/homebrew/bin"] {
            let path = directory + "/" + name
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// Starts a server, retrying on a new port if another process took the free one first.
    ///
    /// With `tls`, the port speaks TLS only, with a self-signed certificate for
    /// 127.0.0.1 made by `openssl` in the server's directory (``certificatePath``).
    static func start(_ extraArguments: [String] = [], tls: Bool = false) throws -> RedisServerProcess {
        var lastError: (any Error)?
        for _ in 0..<5 {
            let server = RedisServerProcess(port: try freePort(), extraArguments: extraArguments, tls: tls)
            do {
                try server.launch()
                return server
            } catch {
                lastError = error
                server.stop()
            }
        }
        throw lastError!
    }

    private init(port: Int, extraArguments: [String], tls: Bool) {
        self.port = port
        self.tls = tls
        self.extraArguments = extraArguments
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("stash-redis-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    let tls: Bool
    var certificatePath: String { directory.appendingPathComponent("cert.pem").path }
    var keyPath: String { directory.appendingPathComponent("key.pem").path }

    private func makeCertificate() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", keyPath, "-out", certificatePath,
                             "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TestServerError(message: "openssl could not make a certificate") }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Starts the process and returns once it logs that it accepts connections.
    func launch() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.executablePath("redis-server")!)
        var listen = ["--port", "\(port)"]
        if tls {
            if !FileManager.default.fileExists(atPath: certificatePath) { try makeCertificate() }
            listen = ["--port", "0", "--tls-port", "\(port)", "--tls-cert-file", certificatePath,
                      "--tls-key-file", keyPath, "--tls-auth-clients", "no"]
        }
        process.arguments = ["--bind", "127.0.0.1"] + listen + ["--save", "", "--appendonly", "no",
                             "--dir", directory.path, "--logfile", "", "--daemonize", "no", "--protected-mode", "no"]
            + extraArguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        self.process = process
        let handle = pipe.fileHandleForReading
        var log = ""
        while true {
            do {
                try waitUntilReadable(handle.fileDescriptor)
            } catch {
                process.terminate()
                throw TestServerError(message: "redis-server on port \(port) was not ready (\(error)):\n\(log)")
            }
            let chunk = handle.availableData
            if chunk.isEmpty {
                throw TestServerError(message: "redis-server on port \(port) exited before it was ready:\n\(log)")
            }
            log += String(decoding: chunk, as: UTF8.self)
            if log.contains("Ready to accept connections") { break }
        }
        // Keep draining the server's output so it never blocks on a full pipe: on a thread of its
        // own, reading to the end (the server's exit). Not with a `readabilityHandler`: its dispatch
        // read source, torn down with the pipe at `kill()`, crashed the whole test process in
        // libdispatch's `_dispatch_event_loop_drain` on Linux, three runs in a row on 2026-11-27
        // (the race swiftlang/swift-corelibs-foundation#5507 describes).
        Thread { _ = handle.readDataToEndOfFile() }.start()
    }

    /// Kills the server at once (SIGKILL), as a crash would.
    func kill() {
        guard let process, process.isRunning else { return }
        killProcess(process.processIdentifier)
        process.waitUntilExit()
    }

    /// Freezes the server (SIGSTOP): its connections stay open and nothing answers, as on a
    /// hung machine, until ``resume()``.
    func pause() {
        guard let process, process.isRunning else { return }
        signalProcess(process.processIdentifier, SIGSTOP)
    }

    /// Lets a paused server run again (SIGCONT).
    func resume() {
        guard let process, process.isRunning else { return }
        signalProcess(process.processIdentifier, SIGCONT)
    }

    /// Stops the server and waits for it to exit.
    func stop() {
        kill()
        process = nil
    }

    /// `redis-cli` against this server; returns its output.
    @discardableResult
    func cli(_ arguments: [String]) throws -> String {
        try Self.runCLI(["-h", "127.0.0.1", "-p", "\(port)"] + arguments)
    }

    @discardableResult
    static func runCLI(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executablePath("redis-cli")!)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: output, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw TestServerError(message: "redis-cli \(arguments.joined(separator: " ")) failed: \(text)")
        }
        return text
    }

    /// A port that was free a moment ago: bound to 0 on loopback, read back, closed.
    static func freePort() throws -> Int {
        #if canImport(Darwin)
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #else
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        guard fd >= 0 else { throw TestServerError(message: "socket failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw TestServerError(message: "bind failed") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

struct TestServerError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

extension RedisServerProcess {
    /// A client configuration for fault tests: reconnect at once, and short
    /// timeouts, so that a killed server fails calls quickly.
    var faultTestConfiguration: RedisConfiguration {
        var configuration = RedisConfiguration(host: "127.0.0.1", port: port)
        configuration.initialReconnectDelay = .zero
        configuration.maximumReconnectDelay = .zero
        configuration.connectTimeout = .milliseconds(500)
        configuration.commandTimeout = .milliseconds(500)
        return configuration
    }
}
/// `kill(pid, SIGKILL)`, under a name that the types' own `kill()` methods do not shadow.
func killProcess(_ pid: pid_t) {
    signalProcess(pid, SIGKILL)
}

/// `kill(pid, signal)`, under a name that the types' own `kill()` methods do not shadow.
func signalProcess(_ pid: pid_t, _ signal: Int32) {
    kill(pid, signal)
}
#endif  // Redis
