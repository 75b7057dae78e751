import Foundation
import StashTestSupport
import Testing

/// Replays every input of the disk fuzz targets' committed corpus (`Fuzzing/Corpus/TARGET`) and
/// every input that once broke one (`Fuzzing/FailCases/TARGET`) through the target's property
/// check (`FuzzChecks/`), so a regression fails `swift test` without running a fuzzer.
@Suite(.timeLimit(.minutes(5))) struct FuzzCorpusReplayTests {
    @Test func keyNormalisation() throws { try replay("FuzzKeyNormalisation", KeyNormalisationCheck.check) }
    @Test func diskEntry() throws { try replay("FuzzDiskEntry", DiskEntryCheck.check) }

    /// Runs `check` on every committed input of `target`; at least one corpus input must exist.
    func replay(_ target: String, _ check: ([UInt8]) throws(PropertyViolation) -> Void) throws {
        let replayed = try replayFuzzInputs(target, check)
        #expect(replayed.corpusCount > 0, "no corpus for \(target)")
        #expect(replayed.failures.isEmpty, "\(replayed.failures)")
    }
}
