#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ArgumentParser
import Stash

/// `stash set`. Not called `Set`, which would hide Swift's `Set`.
struct SetValue: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Store a value read from a file or standard input.",
        discussion: """
            Reads the input to its end, binary-safe, and stores it for the key, \
            replacing any value already there. Creates the cache if the directory is \
            missing or empty; refuses a non-empty directory that is not a cache. \
            Values above \(DiskStorageKind.defaultInlineThreshold / 1024) KiB are stored in files of their own under data/, \
            smaller ones inside manifest.sqlite.

            Example:
              $ stash set ~/.cache/thumbnails cat.png cat.png --ttl 7d
              $ curl -s https://example.com/ | stash set /tmp/pages home --ttl 15m

            \(ExitStatus.helpText)
            """
    )

    @Argument(help: "The cache's directory, created if missing.")
    var directory: String

    @Argument(help: "The key: any non-empty string.")
    var key: String

    @Argument(help: "The file to read the value from; '-' for standard input.")
    var input: String = "-"

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "How long the value lives: seconds, or a number with s, m, h or d (90, 15m, 7d).",
            valueName: "duration"),
        transform: Quantities.parseDuration)
    var ttl: Duration?

    func validate() throws {
        try validateKey(key)
        if let ttl, ttl <= .zero {
            throw ValidationError("--ttl must be more than zero")
        }
    }

    func run() throws(CLIError) {
        // Refuse a directory that is not a cache before reading a long input.
        try CacheAccess.check(directory, .cacheOrEmpty)
        if input == "-" && StandardStreams.standardInputIsTerminal {
            StandardStreams.printError("stash: reading the value from standard input; end it with Ctrl-D")
        }
        let value = try StandardStreams.readAll(path: input)
        try CacheAccess.withCache(directory, .cacheOrEmpty) { cache throws(CLIError) in
            try CacheAccess.attempt("store \(key.quoted)") { () throws(StashError) in
                try cache.setValue(value, forKey: key, ttl: ttl)
            }
        }
        let expiry = ttl.map { ", expires in \(Quantities.formatDuration($0))" } ?? ""
        print("stored \(key.quoted): \(Quantities.formatBytes(value.count))\(expiry)")
    }
}
