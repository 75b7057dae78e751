#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Thrown by ``yield(until:timeout:fileID:line:)`` and ``spin(until:timeout:fileID:line:)``
/// when the condition did not hold within the bound: a regression makes the test fail, not hang.
public struct WaitTimedOut: Error, CustomStringConvertible {
    /// How long the wait lasted before it gave up.
    public let timeout: Duration
    /// Where the wait was written, as `#fileID:#line`.
    public let location: String

    /// A sentence for the test's failure message.
    public var description: String {
        "the condition waited for at \(location) did not hold within \(timeout)"
    }
}

/// The bound of every wait unless a test says otherwise: far above what any condition takes to
/// come true on a loaded 2-core machine under a sanitizer, below a suite's 5-minute time limit and
/// far below CI's time budget. 60 s was not enough: under the thread sanitizer, with other builds
/// on the 2 cores, 1,000 callers took over a minute to reach the load coordinator.
public let defaultWaitTimeout: Duration = .seconds(240)

/// ``defaultWaitTimeout`` in seconds, for XCTest's `fulfillment(of:timeout:)`.
public let defaultWaitTimeoutSeconds = Double(defaultWaitTimeout.components.seconds)

/// Yields until `condition` holds: for waiting until other tasks reach a point the test can
/// observe. Progress is driven by those tasks, never by time; the clock only bounds the wait.
///
/// - Parameters:
///   - condition: What to wait for; checked before each yield.
///   - timeout: How long to wait before giving up (``defaultWaitTimeout`` by default).
///   - onTimeout: Runs before the error is thrown: open there whatever gate the tasks the test
///     started wait at, so that a task group or an `async let` they belong to can end and the
///     failure is reported instead of hanging.
/// - Throws: ``WaitTimedOut`` if `condition` still does not hold after `timeout`.
///
/// ```swift
/// try await yield(until: { coordinator.waiterCount(forKey: "k") == 2 }, onTimeout: gate.open)
/// gate.open()
/// ```
public func yield(
    until condition: () -> Bool,
    timeout: Duration = defaultWaitTimeout,
    onTimeout: () -> Void = {},
    fileID: String = #fileID,
    line: Int = #line
) async throws {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while !condition() {
        if ContinuousClock.now >= deadline {
            onTimeout()
            throw WaitTimedOut(timeout: timeout, location: "\(fileID):\(line)")
        }
        await Task.yield()
    }
}

/// Busy-waits on this thread until `condition` holds: for tests that drive threads rather than
/// tasks (a blocking API under several threads). The clock only bounds the wait.
///
/// - Parameters:
///   - condition: What to wait for; checked in a loop.
///   - timeout: How long to wait before giving up (``defaultWaitTimeout`` by default).
/// - Throws: ``WaitTimedOut`` if `condition` still does not hold after `timeout`.
public func spin(
    until condition: () -> Bool,
    timeout: Duration = defaultWaitTimeout,
    fileID: String = #fileID,
    line: Int = #line
) throws {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while !condition() {
        if ContinuousClock.now >= deadline {
            throw WaitTimedOut(timeout: timeout, location: "\(fileID):\(line)")
        }
    }
}

/// Blocks this thread until `descriptor` (a pipe from a child process) has bytes to read or has
/// reached its end: for reading a child's output without hanging when the child hangs.
///
/// - Throws: ``WaitTimedOut`` if nothing arrives within `timeout` (``defaultWaitTimeout`` by
///   default); the caller then stops the child.
public func waitUntilReadable(
    _ descriptor: Int32,
    timeout: Duration = defaultWaitTimeout,
    fileID: String = #fileID,
    line: Int = #line
) throws(WaitTimedOut) {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while true {
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero else { throw WaitTimedOut(timeout: timeout, location: "\(fileID):\(line)") }
        var pending = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
        let ready = poll(&pending, 1, milliseconds)
        if ready > 0 || (ready < 0 && errno != EINTR) { return }
    }
}
