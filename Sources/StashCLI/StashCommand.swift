import ArgumentParser

@main
struct StashCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stash",
        abstract: "Inspect and manage Stash caches.",
        discussion: """
            Every command but demo takes the cache's directory: the one holding \
            manifest.sqlite. Only set creates a cache, and only in a missing or empty \
            directory.

            Example:
              $ echo hello | stash set /tmp/cache greeting
              $ stash get /tmp/cache greeting
              hello

            \(ExitStatus.helpText)
            """,
        subcommands: [
            Stats.self, Get.self, SetValue.self, Remove.self, Trim.self, Clear.self, Verify.self, Demo.self,
        ]
    )

    /// Parses the command line, runs the command, and exits with one of the
    /// statuses of ``ExitStatus``. Errors are one line on standard error.
    static func main() {
        let status: ExitStatus
        do {
            var command = try parseAsRoot()
            try command.run()
            status = .success
        } catch let error as CLIError {
            StandardStreams.printError(error.line)
            status = error.status
        } catch {
            status = report(error)
        }
        StandardStreams.exitProcess(status)
    }

    /// Reports an error from the argument parser (including a request for help)
    /// or an unexpected one, returning the exit status.
    private static func report(_ error: any Error) -> ExitStatus {
        switch exitCode(for: error) {
        case .success:
            // --help, help <command>, --version: not an error.
            print(fullMessage(for: error))
            return .success
        case .validationFailure:
            StandardStreams.printError("stash: error: \(message(for: error).singleLine)\(helpHint(for: error))")
            return .usage
        default:
            StandardStreams.printError("stash: error: \(message(for: error).singleLine)")
            return .failure
        }
    }

    /// The parser's pointer to the right help, such as " (see 'stash get --help')".
    private static func helpHint(for error: any Error) -> String {
        let lines = fullMessage(for: error).split(separator: "\n").map { $0.drop { $0 == " " } }
        guard let see = lines.last(where: { $0.hasPrefix("See '") }),
              let start = see.firstIndex(of: "'"),
              let end = see[see.index(after: start)...].firstIndex(of: "'")
        else { return "" }
        return " (see \(see[start...end]))"
    }
}
