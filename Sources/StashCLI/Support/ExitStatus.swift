/// The `stash` tool's exit statuses. `1` is kept for "not found" so that scripts
/// can tell a miss from a failure, as `grep` tells "no match" from an error.
enum ExitStatus: Int32 {
    /// The command did what it was asked.
    case success = 0
    /// `get` or `rm` found no value for the key.
    case notFound = 1
    /// Bad usage: a missing or unknown argument, an empty key, a bad option value.
    case usage = 2
    /// The directory is missing, is not a directory, or is not a Stash cache
    /// (for `set`: is neither a cache nor empty).
    case noCache = 3
    /// Reading or writing the cache, or the input file, failed.
    case failure = 4

    /// The table of statuses, for the commands' help.
    static let helpText = """
        Exit status:
          0  success
          1  not found: no value for the key (get, rm)
          2  bad usage: missing or unknown argument, empty key, bad option value
          3  no cache: no such directory, not a directory, or not a Stash cache
          4  failure: reading or writing the cache or the input failed
        """
}

/// An error the tool reports as one line on standard error, exiting with ``status``.
struct CLIError: Error, CustomStringConvertible {
    var status: ExitStatus
    var message: String

    init(_ status: ExitStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    var description: String { message }

    /// The line printed on standard error.
    var line: String {
        let kind = status == .notFound ? "not found" : "error"
        return "stash: \(kind): \(message.singleLine)"
    }
}

extension String {
    /// The string with line breaks and other control characters replaced by
    /// spaces, so that a message always fits on one line.
    var singleLine: String {
        String(String.UnicodeScalarView(unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }))
    }

    /// The string quoted and escaped as a Swift literal, for keys in messages:
    /// `"a\nb"` rather than a line break.
    var quoted: String { String(reflecting: self) }
}
