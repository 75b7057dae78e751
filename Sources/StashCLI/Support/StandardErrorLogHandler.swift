import Logging
import Stash

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The caches' logger for the tool: warnings and errors, one line each on
/// standard error, until ``mute()``.
///
/// A disk cache logs what happens in the background (a damaged manifest set
/// aside, a failed background check). Once a command has closed its cache,
/// the consistency check that opening scheduled may still fail with "closed":
/// that is noise, so the command mutes the log before closing.
enum CacheLog {
    private static let gate = Gate()

    /// A logger writing warnings and errors to standard error.
    static var logger: Logger {
        Logger(label: "stash") { _ in StandardErrorLogHandler(gate: gate) }
    }

    /// Drops every later message.
    static func mute() {
        gate.close()
    }

    /// A flag shared by every handler, behind a lock.
    final class Gate: Sendable {
        private let isOpen = LockedValue(true)

        func close() {
            isOpen.withLock { $0 = false }
        }

        /// Runs `body` if the gate is open, with the lock held, so that no
        /// message is written after ``close()`` returns.
        func ifOpen(_ body: () -> Void) {
            isOpen.withLock { if $0 { body() } }
        }
    }
}

/// A `LogHandler` writing `stash: warning: message (key: value)` lines to standard error.
struct StandardErrorLogHandler: LogHandler {
    let gate: CacheLog.Gate
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .warning

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var details = metadata
        if let extra = event.metadata {
            details.merge(extra) { _, new in new }
        }
        details["stash.directory"] = nil  // the user named it
        let suffix = details.isEmpty
            ? "" : " (" + details.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + ")"
        let line = "stash: \(event.level): \(event.message)\(suffix)".singleLine
        gate.ifOpen { StandardStreams.printError(line) }
    }
}
