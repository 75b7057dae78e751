import Foundation
import Testing

/// Replays every input of the HTTP fuzz targets' committed corpus (`Fuzzing/Corpus/TARGET`) and
/// every input that once broke one (`Fuzzing/FailCases/TARGET`) through the target's property
/// check (`FuzzChecks/`), so a regression fails `swift test` without running a fuzzer.
@Suite(.timeLimit(.minutes(1))) struct FuzzCorpusReplayTests {
    @Test func httpDate() throws { try replay("FuzzHTTPDate", HTTPDateCheck.check) }
    @Test func cacheControl() throws { try replay("FuzzCacheControl", CacheControlCheck.check) }
    @Test func httpCacheRules() throws { try replay("FuzzHTTPCacheRules", HTTPCacheRulesCheck.check) }
    @Test func vary() throws { try replay("FuzzVary", VaryCheck.check) }
    @Test func etag() throws { try replay("FuzzETag", ETagCheck.check) }
    @Test func storedEntry() throws { try replay("FuzzStoredEntry", StoredEntryCheck.check) }

    /// Runs `check` on every input of `target`; at least one corpus input must exist.
    func replay(_ target: String, _ check: ([UInt8]) throws(PropertyViolation) -> Void) throws {
        let inputs = try FuzzInputs.files(of: target)
        #expect(inputs.corpusCount > 0, "no corpus for \(target)")
        for file in inputs.files {
            let bytes = try [UInt8](Data(contentsOf: file))
            do {
                try check(bytes)
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
