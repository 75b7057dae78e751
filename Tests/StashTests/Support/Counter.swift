@testable import Stash

/// A thread-safe counter.
final class Counter: Sendable {
    private let value = LockedValue(0)

    @discardableResult
    func increment() -> Int { value.withLock { $0 += 1; return $0 } }

    var count: Int { value.withLock { $0 } }
}
