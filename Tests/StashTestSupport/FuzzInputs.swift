import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs `check` on every committed input of the fuzz target `target`: its seed corpus
/// (`Fuzzing/Corpus/TARGET`) and every input that once broke it (`Fuzzing/FailCases/TARGET`), so
/// that `swift test` replays them through the target's property check without a fuzzer.
///
/// - Returns: How many corpus inputs there are, and one line per input whose check threw.
/// - Throws: When a folder or an input cannot be read.
public func replayFuzzInputs(
    _ target: String, _ check: ([UInt8]) throws -> Void
) throws -> (corpusCount: Int, failures: [String]) {
    // This file is Tests/StashTestSupport/FuzzInputs.swift: the repository is three folders up.
    let fuzzing = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzzing")
    var corpusCount = 0
    var failures: [String] = []
    for folder in ["Corpus", "FailCases"] {
        let directory = fuzzing.appendingPathComponent(folder).appendingPathComponent(target)
        guard FileManager.default.fileExists(atPath: directory.path) else { continue }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { !$0.hasPrefix(".") && $0 != "README.md" }.sorted()
        if folder == "Corpus" { corpusCount = names.count }
        for name in names {
            let bytes = try readFile(directory.appendingPathComponent(name).path)
            do {
                try check(bytes)
            } catch {
                failures.append("\(target) \(folder)/\(name): \(error)")
            }
        }
    }
    return (corpusCount, failures)
}

/// The bytes of the file at `path`, read with stdio: `Data(contentsOf:)` leaks a 4 KiB buffer
/// for some inputs on Linux (swift-corelibs-foundation, seen by LeakSanitizer in CI's address-
/// sanitizer run), which would fail that run for a leak that is not Stash's.
private func readFile(_ path: String) throws -> [UInt8] {
    guard let file = fopen(path, "rb") else { throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path]) }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let read = fread(&chunk, 1, chunk.count, file)
        if read == 0 { break }
        bytes += chunk[..<read]
    }
    guard ferror(file) == 0 else { throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: path]) }
    return bytes
}
