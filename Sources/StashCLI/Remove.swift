import ArgumentParser
import Stash

struct Remove: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm",
        abstract: "Remove one value.",
        discussion: """
            Removes the value for the key, and its file if it has one. Exits with \
            status 1, and a message on standard error, when there is no value for the key.

            Example:
              $ stash rm ~/.cache/thumbnails cat.png

            \(ExitStatus.helpText)
            """
    )

    @OptionGroup var arguments: CacheKeyArguments

    private var directory: String { arguments.directory }
    private var key: String { arguments.key }

    func run() throws(CLIError) {
        let removed = try CacheAccess.withCache(directory) { cache throws(CLIError) in
            try CacheAccess.attempt("remove \(key.quoted)") { () throws(StashError) in try cache.removeValue(forKey: key) }
        }
        guard removed else {
            throw CLIError(.notFound, "no value for key \(key.quoted) in \(directory)")
        }
        print("removed \(key.quoted)")
    }
}
