import Stash
import Foundation

/// Records what a cache's `onEvict` reports, from any thread.
final class EvictionRecorder<Key: Sendable, Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `events` is only touched with `lock` held.
    private let lock = NSLock()
    private var events: [(key: Key, value: Value, reason: EvictionReason)] = []

    var callback: @Sendable (Key, Value, EvictionReason) -> Void {
        { [self] key, value, reason in
            lock.lock()
            events.append((key, value, reason))
            lock.unlock()
        }
    }

    var all: [(key: Key, value: Value, reason: EvictionReason)] {
        lock.lock()
        defer { lock.unlock() }
        return events
    }

    func keys(_ reason: EvictionReason) -> [Key] {
        all.filter { $0.reason == reason }.map(\.key)
    }

    func reset() {
        lock.lock()
        events.removeAll()
        lock.unlock()
    }
}
