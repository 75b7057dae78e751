#if Redis
import Foundation
import StashTestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `stash-redis-peer` child process: a second `Cache` on the test's Redis,
/// driven one command line at a time (see Tests/RedisPeerHelper/main.swift).
final class PeerProcess: @unchecked Sendable {
    // @unchecked Sendable: only the owning test calls it, one command at a time.
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffered = Data()

    /// The helper, built by SwiftPM next to the test bundle; `STASH_REDIS_PEER` overrides it.
    static func binaryPath() throws -> String {
        if let path = ProcessInfo.processInfo.environment["STASH_REDIS_PEER"] { return path }
        // Linux: the test bundle is the running executable. Apple platforms: an .xctest bundle
        // in the products directory, loaded by xctest.
        #if canImport(Darwin)
        let bundle = Bundle.allBundles.first { $0.bundlePath.hasSuffix(".xctest") }
        let directory = ((bundle?.bundlePath ?? CommandLine.arguments[0]) as NSString).deletingLastPathComponent
        #else
        let directory = (try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") as NSString)
            .deletingLastPathComponent
        #endif
        let path = directory + "/stash-redis-peer"
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw TestServerError(message: "stash-redis-peer is not built at \(path)")
        }
        return path
    }

    /// Starts the peer and waits for its `ready` (subscribed to invalidations).
    init(port: Int, directory: String, prefix: String) throws {
        process.executableURL = URL(fileURLWithPath: try Self.binaryPath())
        process.arguments = ["\(port)", directory, prefix]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let first = try readLine()
        guard first == "ready" else { throw TestServerError(message: "the peer said \(first)") }
    }

    deinit {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    /// Sends one command and returns the peer's one-line answer.
    @discardableResult
    func send(_ command: String) throws -> String {
        input.fileHandleForWriting.write(Data((command + "\n").utf8))
        return try readLine()
    }

    /// Kills the peer with SIGKILL, as a crash would, and waits for it.
    func kill() {
        killProcess(process.processIdentifier)
        process.waitUntilExit()
    }

    /// Asks the peer to exit and waits for it.
    func quit() {
        input.fileHandleForWriting.write(Data("quit\n".utf8))
        process.waitUntilExit()
    }

    private func readLine() throws -> String {
        while true {
            if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffered[buffered.startIndex..<newline], as: UTF8.self)
                buffered.removeSubrange(buffered.startIndex...newline)
                return line
            }
            do {
                try waitUntilReadable(output.fileHandleForReading.fileDescriptor)
            } catch {
                process.terminate()
                throw TestServerError(message: "the peer answered nothing (\(error)); stopped it")
            }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { throw TestServerError(message: "the peer exited") }
            buffered.append(chunk)
        }
    }
}
#endif  // Redis
