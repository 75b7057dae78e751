import Foundation
import Testing
@testable import Stash

/// Multi-process: two `stash-stress mixed` children work on one cache directory at
/// the same time for 10 seconds (× `STASH_RELIABILITY_SCALE`). Each owns 24 keys
/// (`p0-…`, `p1-…`) that only it writes, and both write 16 shared keys (`s-…`).
/// Each child checks its own reads as it goes: an owned key holds exactly its last
/// acknowledged write, a shared key a whole value of that key. Afterwards the test
/// checks the final state of every owned key against what its owner acknowledged,
/// that every shared value is whole, and that the directory is consistent.
///
/// Rerun: `swift test --filter ReliabilityMultiProcessTests`.
@Suite(.timeLimit(.minutes(Reliability.minutes(10)))) struct ReliabilityMultiProcessTests {
    @Test(.timeLimit(.minutes(Reliability.minutes(3))))
    func twoProcessesOnOneDirectoryLoseAndCorruptNothing() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.appending("cache")
            let milliseconds = 10_000 * Reliability.scale
            let children = try (0..<2).map { id in
                try StressChild(
                    ["mixed", "--dir", path, "--seed", "\(0xAB00 + id)", "--id", "\(id)", "--duration-ms", "\(milliseconds)"],
                    stderrPath: directory.appending("stderr-\(id).txt"))
            }
            var finals: [String: UInt64?] = [:]
            var operations = 0
            for (id, child) in children.enumerated() {
                let lines = await child.finish()
                #expect(child.exitedCleanly, "child \(id): \(child.standardError.suffix(2_000))")
                let violations = lines.filter { $0.hasPrefix("VIOLATION") }
                #expect(violations.isEmpty, "child \(id): \(violations.prefix(5))")
                for line in lines where line.hasPrefix("FINAL ") {
                    let parts = line.split(separator: " ")
                    finals[String(parts[1])] = parts[2] == "-" ? UInt64?.none : UInt64(parts[2])
                }
                let done = try #require(lines.last { $0.hasPrefix("DONE ") }, "child \(id) did not finish: \(lines.suffix(3))")
                operations += Int(done.split(separator: " ")[1])!
            }
            #expect(finals.count == 48)

            // Every owned key holds its owner's last acknowledged write (or is absent
            // if that was a removal); every shared value is whole and of its key.
            let cache = try DiskCache<Data>(directory: path, configuration: .init(autoTrimInterval: nil))
            for (key, expected) in finals.sorted(by: { $0.key < $1.key }) {
                let read = try await cache.value(forKey: key)
                let seq = read.flatMap { StressValue.seq(of: $0, key: key) }
                #expect(read == nil || seq != nil, "\(key) holds torn or foreign bytes")
                #expect(seq == expected, "\(key): acknowledged \(String(describing: expected)), read \(String(describing: seq))")
            }
            var shared = 0
            for index in 0..<16 {
                if let bytes = try await cache.value(forKey: "s-\(index)") {
                    #expect(StressValue.seq(of: bytes, key: "s-\(index)") != nil, "s-\(index) holds torn or foreign bytes")
                    shared += 1
                }
            }
            cache.waitForBackgroundWork()
            await cache.close()
            try expectConsistentDirectory(path, allowOrphans: false)
            print("Reliability multi-process: 2 processes × \(milliseconds) ms, \(operations) operations in all; " +
                  "\(finals.values.compactMap { $0 }.count) owned keys present and correct, \(shared) shared keys whole")
        }
    }
}
