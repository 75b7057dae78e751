import ArgumentParser
import Stash

struct Trim: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove entries until the cache is within a count, size or age limit.",
        discussion: """
            --count and --size remove the least recently used entries first; --age \
            removes every entry written that long ago or longer. Give one or more \
            limits: they apply in the order age, count, size.

            Sizes are bytes, or a number with a unit: KB, MB, GB, TB (powers of 1,000) \
            or KiB, MiB, GiB, TiB (powers of 1,024). Ages are seconds, or a number with \
            s, m, h or d.

            Example:
              $ stash trim ~/.cache/thumbnails --size 500MB
              $ stash trim ~/.cache/thumbnails --count 1000 --age 7d

            \(ExitStatus.helpText)
            """
    )

    @Argument(help: "The cache's directory.")
    var directory: String

    @Option(parsing: .unconditional, help: ArgumentHelp("Keep at most this many entries.", valueName: "count"))
    var count: Int?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Keep at most this many bytes of values (10MB, 512KiB, 1048576).", valueName: "size"),
        transform: Quantities.parseByteCount)
    var size: Int?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Remove entries written this long ago or longer (3600, 90m, 7d).", valueName: "age"),
        transform: Quantities.parseDuration)
    var age: Duration?

    func validate() throws {
        if count == nil && size == nil && age == nil {
            throw ValidationError("give at least one limit: --count, --size or --age")
        }
        if let count, count < 0 {
            throw ValidationError("--count must be zero or more (got \(count))")
        }
    }

    func run() throws(CLIError) {
        let (before, after) = try CacheAccess.withCache(directory) { cache throws(CLIError) in
            try CacheAccess.attempt("trim \(directory)") { () throws(StashError) in
                let before = (count: try cache.count, size: try cache.totalSize)
                if let age { try cache.trim(toAge: age) }
                if let count { try cache.trim(toCount: count) }
                if let size { try cache.trim(toSize: size) }
                return (before, (count: try cache.count, size: try cache.totalSize))
            }
        }
        let removed = before.count - after.count
        print(
            "removed \(removed) \(removed == 1 ? "entry" : "entries") (\(Quantities.formatBytes(before.size - after.size))); "
                + "\(after.count) \(after.count == 1 ? "entry" : "entries") (\(Quantities.formatBytes(after.size))) left")
    }
}
