#if Redis
import Foundation
import Testing

/// Where the Redis tests say why they cannot run: a skip on a developer's machine without
/// `redis-server`, a failure where `STASH_REQUIRE_REDIS=1` is set (CI sets it, so that a CI run that
/// silently tested no Redis cannot pass).
///
/// A suite or test that needs a tool carries its condition trait (``Testing/Trait/requiresRedisServer``,
/// ``Testing/Trait/requiresOpenSSL``), which skips it, saying why, when the tool is missing; under
/// `STASH_REQUIRE_REDIS=1` the trait never skips, and the test's own ``requireServer()`` (or
/// ``requireOpenSSL()``) fails it instead.
enum RedisRequirement {
    /// Whether a missing tool fails the test instead of skipping it.
    static var isRequired: Bool {
        ProcessInfo.processInfo.environment["STASH_REQUIRE_REDIS"] == "1"
    }

    /// Why a test needing `redis-server` cannot run without it.
    static let serverMissing = "redis-server is not installed (apt-get install redis-server redis-tools)"

    /// Why the TLS test cannot run without `openssl`, which makes its server's certificate.
    static let opensslMissing = "openssl is not installed (apt-get install openssl)"

    /// Whether `openssl` is where ``RedisServerProcess`` runs it from.
    static var opensslIsInstalled: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")
    }

    /// What a skip says: the condition traits' comment, and ``unavailable(_:)``'s.
    static func skipMessage(_ reason: String) -> String {
        "SKIPPED, Redis not tested: \(reason) (set STASH_REQUIRE_REDIS=1 to fail instead)"
    }

    /// Fails the test (it only runs without `redis-server` under `STASH_REQUIRE_REDIS=1`, see
    /// ``Testing/Trait/requiresRedisServer``) unless `redis-server` is installed.
    static func requireServer() throws {
        if !RedisServerProcess.isAvailable { try unavailable(serverMissing) }
    }

    /// Fails the test (it only runs without `openssl` under `STASH_REQUIRE_REDIS=1`, see
    /// ``Testing/Trait/requiresOpenSSL``) unless `openssl` is installed.
    static func requireOpenSSL() throws {
        if !opensslIsInstalled { try unavailable(opensslMissing) }
    }

    /// Fails the test under `STASH_REQUIRE_REDIS=1`, saying `reason`; otherwise ends it as
    /// skipped, saying so: for what only shows once the test runs (a `redis-server` without TLS).
    static func unavailable(_ reason: String) throws -> Never {
        if isRequired {
            throw RequirementMissing(message: "\(reason); STASH_REQUIRE_REDIS=1 makes this a failure")
        }
        #if compiler(>=6.3)
        try Test.cancel(Comment(rawValue: skipMessage(reason)))
        #else
        // Swift Testing before 6.3 cannot skip a test once it runs: it fails, saying why.
        throw RequirementMissing(message: "\(reason) (Swift Testing before 6.3 cannot skip a running test)")
        #endif
    }

    /// The error that fails a test whose requirement is missing.
    struct RequirementMissing: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }
}

extension Trait where Self == ConditionTrait {
    /// Skips the suite or test, with ``RedisRequirement/skipMessage(_:)``, when `redis-server` is not
    /// installed; never under `STASH_REQUIRE_REDIS=1`, where the test's
    /// ``RedisRequirement/requireServer()`` fails it instead.
    static var requiresRedisServer: Self {
        .enabled(
            if: RedisRequirement.isRequired || RedisServerProcess.isAvailable,
            Comment(rawValue: RedisRequirement.skipMessage(RedisRequirement.serverMissing)))
    }

    /// Skips the test, with ``RedisRequirement/skipMessage(_:)``, when `openssl` is not installed;
    /// never under `STASH_REQUIRE_REDIS=1`, where the test's ``RedisRequirement/requireOpenSSL()``
    /// fails it instead.
    static var requiresOpenSSL: Self {
        .enabled(
            if: RedisRequirement.isRequired || RedisRequirement.opensslIsInstalled,
            Comment(rawValue: RedisRequirement.skipMessage(RedisRequirement.opensslMissing)))
    }
}
#endif  // Redis
