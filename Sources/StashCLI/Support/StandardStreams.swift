#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Binary-safe reading and writing of whole byte buffers on file descriptors,
/// with `read` and `write` directly: no buffering, no text conversion.
enum StandardStreams {
    /// Whether standard input is a terminal.
    static var standardInputIsTerminal: Bool { isatty(STDIN_FILENO) != 0 }

    /// Whether standard error is a terminal.
    static var standardErrorIsTerminal: Bool { isatty(STDERR_FILENO) != 0 }

    /// Writes `text` and a line break to standard error, ignoring failures.
    static func printError(_ text: String) {
        try? write(Data((text + "\n").utf8), to: STDERR_FILENO)
    }

    /// Writes all of `bytes` to `descriptor`, retrying after interruptions and
    /// partial writes.
    static func write(_ bytes: Data, to descriptor: Int32) throws(CLIError) {
        let failure: Int32? = bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = systemWrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += written
            }
            return nil
        }
        if let failure {
            throw CLIError(.failure, "cannot write the output: \(errorDescription(failure))")
        }
    }

    /// Reads `descriptor` to its end.
    static func readAll(from descriptor: Int32, name: String) throws(CLIError) -> Data {
        var result = Data()
        let chunkSize = 1 << 16
        let chunk = UnsafeMutableRawPointer.allocate(byteCount: chunkSize, alignment: 1)
        defer { chunk.deallocate() }
        while true {
            let count = systemRead(descriptor, chunk, chunkSize)
            if count == 0 { return result }
            if count < 0 {
                if errno == EINTR { continue }
                throw CLIError(.failure, "cannot read \(name): \(errorDescription(errno))")
            }
            result.append(chunk.assumingMemoryBound(to: UInt8.self), count: count)
        }
    }

    /// Reads the file at `path` to its end; `-` is standard input.
    static func readAll(path: String) throws(CLIError) -> Data {
        if path == "-" {
            return try readAll(from: STDIN_FILENO, name: "standard input")
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        if descriptor < 0 {
            throw CLIError(.failure, "cannot open \(path): \(errorDescription(errno))")
        }
        defer { close(descriptor) }
        return try readAll(from: descriptor, name: path)
    }

    /// Flushes standard output and ends the process with `status`.
    static func exitProcess(_ status: ExitStatus) -> Never {
        exit(status.rawValue)
    }

    /// `strerror`, as a Swift string.
    static func errorDescription(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}

// The C functions, under names that the static methods above don't shadow.
private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}

private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
