#if Redis
import Foundation
import XCTest

/// Where the Redis tests say why they cannot run: a skip on a developer's machine without
/// `redis-server`, a failure where `STASH_REQUIRE_REDIS=1` is set (CI sets it, so that a CI run that
/// silently tested no Redis cannot pass).
enum RedisRequirement {
    /// Whether a missing tool fails the test instead of skipping it.
    static var isRequired: Bool {
        ProcessInfo.processInfo.environment["STASH_REQUIRE_REDIS"] == "1"
    }

    /// Skips the test, or fails it under `STASH_REQUIRE_REDIS=1`, unless `redis-server` is installed.
    static func requireServer() throws {
        if !RedisServerProcess.isAvailable {
            try unavailable("redis-server is not installed (apt-get install redis-server redis-tools)")
        }
    }

    /// Skips the test, or fails it under `STASH_REQUIRE_REDIS=1`, saying `reason`.
    static func unavailable(_ reason: String) throws -> Never {
        if isRequired {
            throw RequirementMissing(message: "\(reason); STASH_REQUIRE_REDIS=1 makes this a failure")
        }
        throw XCTSkip("SKIPPED, Redis not tested: \(reason) (set STASH_REQUIRE_REDIS=1 to fail instead)")
    }

    /// The error that fails a test whose requirement is missing.
    struct RequirementMissing: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }
}
#endif  // Redis
