import Logging
import Stash

/// Collects log messages in memory, so tests can assert what was logged.
///
/// ```swift
/// let log = LogRecorder()
/// let storage = try KVStorage(..., logger: log.logger)
/// #expect(log.contains(level: .error, "set aside"))
/// ```
public final class LogRecorder: Sendable {
    private let records = LockedValue<[(level: Logger.Level, message: String)]>([])

    /// Creates an empty recorder.
    public init() {}

    /// A logger, at level `.trace`, whose messages this recorder keeps.
    public var logger: Logger {
        Logger(label: "stash.tests") { _ in RecordingLogHandler(recorder: self) }
    }

    /// Appends a record.
    public func append(_ level: Logger.Level, _ message: String) {
        records.withLock { $0.append((level, message)) }
    }

    /// Every message logged at `level`, in order.
    public func messages(at level: Logger.Level) -> [String] {
        records.withLock { $0.filter { $0.level == level }.map(\.message) }
    }

    /// Whether a message at `level` contains `text`.
    public func contains(level: Logger.Level, _ text: String) -> Bool {
        messages(at: level).contains { $0.contains(text) }
    }

    /// How many messages were logged at `level` or above.
    public func count(atLeast level: Logger.Level) -> Int {
        records.withLock { $0.filter { $0.level >= level }.count }
    }
}

/// A `LogHandler` appending to a ``LogRecorder``.
public struct RecordingLogHandler: LogHandler {
    /// Where the messages go.
    public let recorder: LogRecorder
    /// The handler's metadata (kept, not recorded).
    public var metadata: Logger.Metadata = [:]
    /// `.trace` by default: everything is recorded.
    public var logLevel: Logger.Level = .trace

    /// Creates a handler that appends to `recorder`.
    public init(recorder: LogRecorder) {
        self.recorder = recorder
    }

    /// One metadata value.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Records the event's level and message.
    public func log(event: LogEvent) {
        recorder.append(event.level, event.message.description)
    }
}
