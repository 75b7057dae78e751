/// A value and the lock that guards it, reachable only through
/// ``withLock(_:)``.
///
/// The one way in Stash to share mutable state between threads outside a
/// cache engine: the library, the `stash` tool and the tests use it instead of
/// hand-written "lock plus `var`" classes, so the `@unchecked Sendable`
/// reasoning lives here once. Modelled on swift-nio's `NIOLockedValueBox`.
///
/// What keeps a lock of its own instead, each saying why where it is declared: the engines that
/// own their caches' locks (`MemoryCacheCore`, `DiskCacheCore`), `KeyStripes` (a stripe's lock is
/// also tried without waiting), `GroupCommit` (condition variables on its lock) and
/// `MemoryPressureMonitor` (a second lock that serialises its polls).
///
/// ```swift
/// let hits = LockedValue(0)
/// hits.withLock { $0 += 1 }
/// let seen = hits.withLock { $0 }
/// ```
///
/// - Important: Not recursive: never call ``withLock(_:)`` on the same box
///   from inside its own body.
package final class LockedValue<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only read or written inside `withLock`,
    // with `lock` held, and no reference to it escapes the body (the body gets
    // an `inout` access that ends when it returns). A `Value` that is not
    // Sendable can still be handed across threads through the box, as with
    // NIOLockedValueBox; callers store Sendable values or values that never
    // leave the body.
    private let lock = Lock()
    private var value: Value

    /// Creates a box holding `value`.
    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    ///
    /// - Complexity: O(1) plus the cost of `body`. Blocks while another thread
    ///   holds the lock (uncontended cost: docs/benchmarks.md, "Primitives").
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try lock.withLock { try body(&value) }
    }
}
