#if Redis
import Testing

/// Every suite of this target but ``FuzzCorpusReplayTests``, nested here so that their tests run
/// one at a time, as they did under XCTest. Most start their own `redis-server` processes (six for
/// a cluster), kill, freeze and restart them, and bound commands by timeouts of 200 to 500 ms or
/// read back times to live. Run in parallel on a 2-core machine, the 80 or so servers starting at
/// once held the cooperative threads for seconds, and tests failed in 7 runs out of 8: a 60-second
/// time to live read back below 55 seconds, a second connect attempt made before the first one's
/// backoff started, and a write made as Redis restarted lost by `redisKilledAndRestartedDuringABurst`.
@Suite(.serialized, .timeLimit(.minutes(5))) enum RedisSuites {}

/// Runs a test's `body`, then `cleanup` (closing the clients, tiers or caches it made), whether
/// `body` returned or threw: what `tearDown` did under XCTest.
func run(_ body: () async throws -> Void, thenClose cleanup: () async -> Void) async throws {
    do {
        try await body()
    } catch {
        await cleanup()
        throw error
    }
    await cleanup()
}
#endif  // Redis
