import ArgumentParser
import Stash

struct Clear: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove every entry.",
        discussion: """
            Removes every entry and deletes the value files. On a terminal, shows a \
            progress bar on standard error while the entries are removed.

            Example:
              $ stash clear ~/.cache/thumbnails

            \(ExitStatus.helpText)
            """
    )

    @Argument(help: "The cache's directory.")
    var directory: String

    func run() throws(CLIError) {
        let removed = try CacheAccess.withCache(directory) { cache throws(CLIError) in
            var bar = ProgressBar(label: "clearing")
            var removed = 0
            defer { bar.finish() }
            try CacheAccess.attempt("clear \(directory)") { () throws(StashError) in
                try cache.removeAll { done, total in
                    bar.update(completed: done, total: total)
                    removed = total
                }
            }
            // removeAll moved the files to trash/; delete them now rather than
            // leave them to the next time the cache is opened.
            cache.emptyTrash()
            return removed
        }
        print("removed \(removed) \(removed == 1 ? "entry" : "entries")")
    }
}
