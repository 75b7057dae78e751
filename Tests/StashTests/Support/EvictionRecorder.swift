@testable import Stash
import Foundation

/// Records what a cache's `onEvict` reports, from any thread.
final class EvictionRecorder<Key: Sendable, Value: Sendable>: Sendable {
    private let events = LockedValue<[(key: Key, value: Value, reason: EvictionReason)]>([])

    var callback: @Sendable (Key, Value, EvictionReason) -> Void {
        { [events] key, value, reason in
            events.withLock { $0.append((key, value, reason)) }
        }
    }

    var all: [(key: Key, value: Value, reason: EvictionReason)] {
        events.withLock { $0 }
    }

    func keys(_ reason: EvictionReason) -> [Key] {
        all.filter { $0.reason == reason }.map(\.key)
    }

    func reset() {
        events.withLock { $0.removeAll() }
    }
}
