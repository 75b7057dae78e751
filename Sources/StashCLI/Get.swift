#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ArgumentParser
import Stash

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

struct Get: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a value's raw bytes to standard output.",
        discussion: """
            Writes the bytes exactly as stored: binary-safe, no line break added. \
            An expired value counts as missing. Exits with status 1, and a message \
            on standard error, when there is no value for the key.

            Example:
              $ stash get ~/.cache/thumbnails cat.png > cat.png

            \(ExitStatus.helpText)
            """
    )

    @OptionGroup var arguments: CacheKeyArguments

    private var directory: String { arguments.directory }
    private var key: String { arguments.key }

    func run() throws(CLIError) {
        let value = try CacheAccess.withCache(directory) { cache throws(CLIError) in
            try CacheAccess.attempt("read \(key.quoted)") { () throws(StashError) in try cache.value(forKey: key) }
        }
        guard let value else {
            throw CLIError(.notFound, "no value for key \(key.quoted) in \(directory)")
        }
        try StandardStreams.write(value, to: STDOUT_FILENO)
    }
}
