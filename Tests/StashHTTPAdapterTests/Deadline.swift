/// A test's wait ran past its deadline: the test fails instead of hanging CI.
struct DeadlineExceeded: Error, CustomStringConvertible {
    let limit: Duration
    var description: String { "the wait did not end within \(limit)" }
}

/// Runs `operation`, cancelling it and throwing ``DeadlineExceeded`` when it has not finished
/// within `limit`. The operation must end when cancelled (AsyncHTTPClient's requests and bodies do).
func withDeadline<T: Sendable>(
    _ limit: Duration = .seconds(20),
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: limit)
            throw DeadlineExceeded(limit: limit)
        }
        defer { group.cancelAll() }
        guard let result = try await group.next() else { throw DeadlineExceeded(limit: limit) }
        return result
    }
}

/// Yields until `condition` holds, for at most `limit`: progress comes from other tasks and
/// threads, never from waiting out time.
///
/// - Returns: Whether `condition` held before the deadline.
func eventually(within limit: Duration = .seconds(20), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        await Task.yield()
    }
    return true
}
