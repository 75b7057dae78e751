#if Redis
import Foundation
import StashTestSupport
import Testing

/// Replays every input of the Redis fuzz targets' committed corpus (`Fuzzing/Corpus/TARGET`) and
/// every input that once broke one (`Fuzzing/FailCases/TARGET`) through the target's property
/// check (`FuzzChecks/`), so a regression fails `swift test --enable-all-traits` (this suite needs the `Redis` trait)
/// without running a fuzzer.
@Suite(.timeLimit(.minutes(5))) struct FuzzCorpusReplayTests {
    @Test func resp() throws { try replay("FuzzRESP", RESPCheck.check) }
    @Test func redisValueHeader() throws { try replay("FuzzRedisValueHeader", RedisValueHeaderCheck.check) }
    @Test func redisCluster() throws { try replay("FuzzRedisCluster", RedisClusterCheck.check) }

    /// Runs `check` on every committed input of `target`; at least one corpus input must exist.
    func replay(_ target: String, _ check: ([UInt8]) throws(PropertyViolation) -> Void) throws {
        let replayed = try replayFuzzInputs(target, check)
        #expect(replayed.corpusCount > 0, "no corpus for \(target)")
        #expect(replayed.failures.isEmpty, "\(replayed.failures)")
    }
}
#endif  // Redis
