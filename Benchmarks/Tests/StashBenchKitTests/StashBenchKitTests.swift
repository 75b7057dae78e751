import BenchSupport
import Foundation
import Testing
@testable import StashBenchKit

@Suite("Trace replay machinery")
struct TraceReplayTests {
    @Test("Belady on a worked example: 1 2 3 1 2 4 1 2 3 4 with room for 2")
    func beladySmall() {
        // 1, 2 miss (cold). 3 is needed later than 1 and 2: not admitted. 1, 2 hit.
        // 4 is needed later than 1 and 2 again: not admitted. 1, 2 hit. 3 and 4 miss
        // (keeping either since idx 2 would have cost two hits to win one).
        let trace = [1, 2, 3, 1, 2, 4, 1, 2, 3, 4]
        #expect(beladyHits(trace: trace, capacity: 2) == 4)
    }

    @Test("Belady never loses to LRU or FIFO, and a cache as large as the key set only misses cold")
    func beladyBounds() {
        var generator = SeededGenerator(seed: 7)
        let zipf = ZipfDistribution(count: 300, exponent: 0.8)
        let trace = (0..<20_000).map { _ in zipf.sample(using: &generator) }
        for capacity in [1, 10, 50, 150] {
            var lru = ReferenceLRU<Int>(capacity: capacity)
            var fifo = ReferenceFIFO<Int>(capacity: capacity)
            let lruHits = trace.reduce(0) { $0 + (lru.access($1) ? 1 : 0) }
            let fifoHits = trace.reduce(0) { $0 + (fifo.access($1) ? 1 : 0) }
            let opt = beladyHits(trace: trace, capacity: capacity)
            #expect(opt >= lruHits)
            #expect(opt >= fifoHits)
        }
        #expect(beladyHits(trace: trace, capacity: 300) == trace.count - Set(trace).count)
    }

    @Test("LRU keeps the recently used key; FIFO evicts the oldest insertion regardless")
    func referencePolicies() {
        var lru = ReferenceLRU<String>(capacity: 2)
        // a, b miss; a hits (now most recent); c evicts b; a hits; b misses.
        let lruHits = ["a", "b", "a", "c", "a", "b"].map { lru.access($0) }
        #expect(lruHits == [false, false, true, false, true, false])
        var fifo = ReferenceFIFO<String>(capacity: 2)
        // a, b miss; a hits; c evicts a (oldest insertion); a misses (evicts b); c hits.
        let fifoHits = ["a", "b", "a", "c", "a", "c"].map { fifo.access($0) }
        #expect(fifoHits == [false, false, true, false, false, true])
    }

    @Test("Trace files: one decimal key per line, CRLF and blank lines tolerated, junk rejected")
    func traceParsing() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stash-bench-tests-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let good = directory.appendingPathComponent("good.txt")
        try "12\r\n7\n\n-3\n4000000000".write(to: good, atomically: true, encoding: .utf8)
        #expect(try Trace.load(path: good.path, name: "good").keys == [12, 7, -3, 4_000_000_000])
        let bad = directory.appendingPathComponent("bad.txt")
        try "12\n7x\n".write(to: bad, atomically: true, encoding: .utf8)
        #expect(throws: BenchError.self) { try Trace.load(path: bad.path, name: "bad") }
    }

    @Test("README reference rows: capacity, LRU, FIFO, best known with its policy, OPT")
    func readmeParsing() throws {
        let readme = """
        | file | requests | unique keys | pattern | origin |
        |---|---:|---:|---|---|
        | gli.txt | 6,015 | 2,529 | looping | LIRS |

        | trace @ capacity | LRU | FIFO | best known | OPT |
        |---|---:|---:|---:|---:|
        | gli @ 500 | 0.95 | 0.95 | 33.22 (LIRS) | 34.33 |
        | web12 @ 3000 | 76.48 | 72.99 | 78.62 (S3-FIFO) | 84.24 |
        """
        let rows = try TraceReference.parse(readme: readme)
        #expect(rows.count == 2)
        #expect(rows[0] == TraceReference(trace: "gli", capacity: 500, lru: 0.95, fifo: 0.95, bestKnown: 33.22,
                                          bestKnownPolicy: "LIRS", opt: 34.33))
        #expect(rows[1].bestKnownPolicy == "S3-FIFO")
        #expect(rows[1].capacity == 3000)
    }

    @Test("Percentages compare at two decimals")
    func percentages() {
        #expect(twoDecimals(hitPercent(hits: 57, requests: 6015)) == "0.95")
        #expect(twoDecimals(hitPercent(hits: 0, requests: 0)) == "0.00")
    }
}

@Suite("Workload generation")
struct WorkloadTests {
    @Test("Seeded generator and Zipf sampling are deterministic and skewed")
    func zipf() {
        var a = SeededGenerator(seed: 42), b = SeededGenerator(seed: 42)
        #expect((0..<100).map { _ in a.next() } == (0..<100).map { _ in b.next() })
        let zipf = ZipfDistribution(count: 1_000, exponent: 0.99)
        var generator = SeededGenerator(seed: 1)
        var counts = [Int](repeating: 0, count: 1_000)
        for _ in 0..<100_000 { counts[zipf.sample(using: &generator)] += 1 }
        #expect(counts[0] > counts[9] * 5)
        #expect(counts.allSatisfy { $0 >= 0 })
        #expect(counts.reduce(0, +) == 100_000)
    }

    @Test("The Zipf mix has the asked share of writes")
    func mixShares() {
        let ops = ZipfOperations(keyCount: 1_000, operations: 100_000, exponent: 0.99, readFraction: 0.8, seed: 3)
        let writes = ops.encoded.filter { $0 & 1 == 1 }.count
        #expect(abs(Double(writes) / 100_000 - 0.2) < 0.01)
        #expect(ops.encoded.allSatisfy { ($0 >> 1) < 1_000 })
    }

    @Test("Medians")
    func medians() {
        #expect(median([3, 1, 2]) == 2)
        #expect(median([4, 1, 3, 2]) == 2.5)
    }
}

@Suite("Disk section")
struct DiskSectionTests {
    @Test("Crossover: interpolated at the last fall below 1, or out of range")
    func crossover() {
        let sizes = [1024, 2048, 4096, 8192]
        // 2 at 2 KiB, 0.5 at 4 KiB: log ratio halfway, so halfway in log size: 2^11.5 bytes.
        guard case .at(let bytes, let crossings)? = Crossover.find(sizes: sizes, ratios: [3, 2, 0.5, 0.4]) else {
            Issue.record("expected a crossover")
            return
        }
        #expect(abs(bytes - 2048 * 2.0.squareRoot()) < 1e-6)
        #expect(crossings == 1)
        #expect(Crossover.find(sizes: sizes, ratios: [0.9, 0.8, 0.5, 0.4]) == .below(1024))
        #expect(Crossover.find(sizes: sizes, ratios: [3, 0.8, 1.5, 1.2]) == .above(8192))
        // Two crossings: the last one counts.
        guard case .at(let last, 2)? = Crossover.find(sizes: sizes, ratios: [2, 0.9, 1.1, 0.5]) else {
            Issue.record("expected the last of two crossings")
            return
        }
        #expect(last > 4096 && last < 8192)
    }

    @Test("Sizes print as the tables show them")
    func sizes() {
        #expect(byteSizeText(100) == "100 B")
        #expect(byteSizeText(16 * 1024) == "16 KiB")
        #expect(byteSizeText(100 * 1024) == "100 KiB")
        #expect(byteSizeText(1 << 20) == "1 MiB")
    }

    @Test("Every disk contender stores, finds and misses, DiskCache included")
    func contenders() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("stash-bench-disk-tests-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: base) }
        // 3,000 bytes go inline in every manifest, 40,000 to files in the mixed ones.
        for valueSize in [3_000, 40_000] {
            let workload = DiskWorkload(name: "test", count: 20, valueSize: valueSize, seed: 9)
            let results = try measureDisk(workload, contenders: DiskContender.all, baseDirectory: base, runs: 1, warmup: 0,
                                          progress: nil)
            #expect(results.map(\.phase) == ["write", "read-hit", "read-miss"])
            for phase in results {
                #expect(phase.contenders.count == DiskContender.all.count)
                let expected = phase.phase == "read-hit" ? 100.0 : 0.0
                if phase.phase != "write" { #expect(phase.contenders.allSatisfy { $0.medianHitPercent == expected }) }
            }
        }
        #expect(BenchLog.drain().isEmpty)
    }
}
