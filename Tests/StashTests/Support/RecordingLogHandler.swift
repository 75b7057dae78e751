import Logging
@testable import Stash

/// Collects log messages in memory, so tests can assert what was logged.
///
/// ```swift
/// let log = LogRecorder()
/// let storage = try KVStorage(..., logger: log.logger)
/// #expect(log.contains(level: .error, "set aside"))
/// ```
final class LogRecorder: Sendable {
    private let records = LockedValue<[(level: Logger.Level, message: String)]>([])

    /// A logger, at level `.trace`, whose messages this recorder keeps.
    var logger: Logger {
        Logger(label: "stash.tests") { _ in RecordingLogHandler(recorder: self) }
    }

    /// Appends a record.
    func append(_ level: Logger.Level, _ message: String) {
        records.withLock { $0.append((level, message)) }
    }

    /// Every message logged at `level`, in order.
    func messages(at level: Logger.Level) -> [String] {
        records.withLock { $0.filter { $0.level == level }.map(\.message) }
    }

    /// Whether a message at `level` contains `text`.
    func contains(level: Logger.Level, _ text: String) -> Bool {
        messages(at: level).contains { $0.contains(text) }
    }
}

/// A `LogHandler` appending to a ``LogRecorder``.
struct RecordingLogHandler: LogHandler {
    let recorder: LogRecorder
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        recorder.append(event.level, event.message.description)
    }
}
