import Foundation
import Testing

/// Replays every input of the Redis fuzz targets' committed corpus (`Fuzzing/Corpus/TARGET`) and
/// every input that once broke one (`Fuzzing/FailCases/TARGET`) through the target's property
/// check (`FuzzChecks/`), so a regression fails `swift test` without running a fuzzer.
@Suite(.timeLimit(.minutes(1))) struct FuzzCorpusReplayTests {
    @Test func resp() throws { try replay("FuzzRESP", RESPCheck.check) }
    @Test func redisValueHeader() throws { try replay("FuzzRedisValueHeader", RedisValueHeaderCheck.check) }
    @Test func redisCluster() throws { try replay("FuzzRedisCluster", RedisClusterCheck.check) }

    /// Runs `check` on every input of `target`; at least one corpus input must exist.
    func replay(_ target: String, _ check: ([UInt8]) throws(PropertyViolation) -> Void) throws {
        let inputs = try FuzzInputs.files(of: target)
        #expect(inputs.corpusCount > 0, "no corpus for \(target)")
        for file in inputs.files {
            let bytes = try [UInt8](Data(contentsOf: file))
            do {
                try check(bytes)
            } catch where error.knownDefect {
                // A reported defect outside the fuzzed parsers: recorded, expected until it is fixed.
                withKnownIssue { Issue.record("\(target) \(file.lastPathComponent): \(error)") }
            } catch {
                Issue.record("\(target) \(file.lastPathComponent): \(error)")
            }
        }
    }
}

/// The committed inputs of a fuzz target, found from this file's place in the repository.
enum FuzzInputs {
    static let fuzzing = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
        .appendingPathComponent("Fuzzing")

    static func files(of target: String) throws -> (files: [URL], corpusCount: Int) {
        var files: [URL] = []
        var corpusCount = 0
        for folder in ["Corpus", "FailCases"] {
            let directory = fuzzing.appendingPathComponent(folder).appendingPathComponent(target)
            guard FileManager.default.fileExists(atPath: directory.path) else { continue }
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
                .filter { !$0.hasPrefix(".") && $0 != "README.md" }.sorted()
            if folder == "Corpus" { corpusCount = names.count }
            files += names.map { directory.appendingPathComponent($0) }
        }
        return (files, corpusCount)
    }
}
