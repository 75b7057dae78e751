#if Redis
import Logging
import Stash

/// A swift-log handler that keeps every message, to count how often a failure is logged.
struct RecordingLogHandler: LogHandler {
    final class Store: Sendable {
        let messages = LockedValue<[(Logger.Level, String)]>([])
        func count(atLeast level: Logger.Level) -> Int {
            messages.withLock { $0.filter { $0.0 >= level }.count }
        }
    }

    let store: Store
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        store.messages.withLock { $0.append((event.level, "\(event.message)")) }
    }

    static func makeLogger() -> (Logger, Store) {
        let store = Store()
        return (Logger(label: "test") { _ in RecordingLogHandler(store: store) }, store)
    }
}
#endif  // Redis
