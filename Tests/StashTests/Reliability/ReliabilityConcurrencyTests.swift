import Dispatch
import Foundation
import Testing
@testable import Stash

/// Concurrency: 8 threads run random operations against one MemoryCache, one
/// DiskCache and one Cache; reads check they got their own key's whole value, and
/// the invariants are checked afterwards (count, cost, the manifest against the
/// files, totals against a full count).
///
/// Sizes (operations per thread): MemoryCache 100,000; DiskCache and Cache
/// ``diskOperations`` (see docs/reliability.md for the measurements behind it).
/// `STASH_RELIABILITY_SCALE=N` multiplies the disk counts (N = 25 gives 100,000);
/// under the thread or address sanitizer they are divided by 4. The worker threads
/// are threads of their own (``onThreads(_:_:)``), not the test's cooperative pool.
///
/// Rerun: `swift test --filter ReliabilityConcurrencyTests`; under TSan as CI does:
/// `swift test --scratch-path .build-tsan --sanitize=thread --filter Concurrency`.
@Suite(.timeLimit(.minutes(Reliability.minutes(10)))) struct ReliabilityConcurrencyTests {
    static let threads = 8
    static let memoryOperations = 100_000
    static var diskOperations: Int {
        let base = 4_000 * Reliability.scale
        return min(100_000, Reliability.underSanitizer ? base / 4 : base)
    }

    /// Records violations from any thread.
    final class Violations: Sendable {
        private let state = LockedValue((count: 0, first: [String]()))

        func record(_ text: String) {
            state.withLock {
                $0.count += 1
                if $0.first.count < 10 { $0.first.append(text) }
            }
        }

        var count: Int { state.withLock { $0.count } }
        var first: [String] { state.withLock { $0.first } }
    }

    @Test(.timeLimit(.minutes(Reliability.minutes(5))))
    func memoryCacheKeepsItsInvariantsUnderEightThreads() async {
        let countLimit = 1_000
        let costLimit = 20_000
        // A manual clock, advanced by thread 0, so that what has expired at the end
        // does not depend on timing.
        let clock = ManualClock()
        let cache = MemoryCache<Int, Int>(configuration: .init(
            countLimit: countLimit, costLimit: costLimit, autoTrimInterval: .milliseconds(5),
            releasesValuesInBackground: true, clock: clock))
        let violations = Violations()
        let start = ContinuousClock.now
        await onThreads(Self.threads) { thread in
            var rng = SeededGenerator(seed: 0xC0_0000 &+ UInt64(thread))
            for step in 0..<Self.memoryOperations {
                if thread == 0 && step % 64 == 0 { clock.advance(by: .microseconds(100)) }
                let key = Int.random(in: 0..<5_000, using: &rng)
                switch Int.random(in: 0..<100, using: &rng) {
                case 0..<40:
                    if let value = cache.value(forKey: key), value / 1_000_000 != key {
                        violations.record("\(key) read \(value)")
                    }
                case 40..<75:
                    // Some negative costs (they count as 0) and some short TTLs.
                    let cost = Int.random(in: -5...60, using: &rng)
                    cache.setValue(key * 1_000_000 + thread * 100_000 + step % 100_000, forKey: key, cost: cost,
                                   ttl: step % 7 == 0 ? .microseconds(Int.random(in: -10...500, using: &rng)) : nil)
                case 75..<87:
                    if let value = cache.removeValue(forKey: key), value / 1_000_000 != key {
                        violations.record("\(key) removed \(value)")
                    }
                case 87..<95:
                    _ = cache.contains(key)
                case 95..<98:
                    let count = cache.count
                    let cost = cache.totalCost
                    if count > countLimit || cost > costLimit { violations.record("count \(count), cost \(cost)") }
                default:
                    switch step % 5 {
                    case 0: cache.trim(toCount: Int.random(in: 0...countLimit, using: &rng))
                    case 1: cache.trim(toCost: Int.random(in: 0...costLimit, using: &rng))
                    case 2: cache.removeExpired()
                    case 3: _ = cache.snapshot().count
                    default: cache.trimCostliest(toCost: costLimit / 2)
                    }
                }
            }
        }
        let elapsed = ContinuousClock.now - start
        cache.autoTrimInterval = nil
        #expect(violations.count == 0, "\(violations.first)")
        #expect(cache.count <= countLimit)
        #expect(cache.totalCost <= costLimit)
        // Expire every entry with a TTL, then count what is left, one by one.
        clock.advance(by: .seconds(1))
        cache.removeExpired()
        let snapshot = cache.snapshot()
        #expect(cache.count <= countLimit)
        #expect(cache.totalCost <= costLimit)
        #expect(cache.count == snapshot.count)
        #expect(cache.totalCost == snapshot.reduce(0) { $0 + $1.cost })
        #expect(snapshot.allSatisfy { $0.value / 1_000_000 == $0.key && $0.cost >= 0 })
        print("Reliability concurrency MemoryCache: \(Self.threads) threads × \(Self.memoryOperations) operations in \(elapsed); " +
              "final count \(snapshot.count), cost \(cache.totalCost)")
    }

    /// One random disk operation; `read` returns the bytes read for `key`, if any.
    static func diskOperation(
        thread: Int, step: Int, rng: inout SeededGenerator, violations: Violations,
        read: (String) throws -> Data?, write: (Data, String) throws -> Void, remove: (String) throws -> Void,
        other: (Int) throws -> Void
    ) {
        let key = "key-\(Int.random(in: 0..<300, using: &rng))"
        do {
            switch Int.random(in: 0..<100, using: &rng) {
            case 0..<45:
                if let bytes = try read(key), StressValue.seq(of: bytes, key: key) == nil {
                    violations.record("\(key) read \(bytes.count) torn or foreign bytes")
                }
            case 45..<80:
                let length = Int.random(in: 0..<5, using: &rng) == 0
                    ? Int.random(in: 5_000...40_000, using: &rng) : Int.random(in: 40...2_000, using: &rng)
                try write(StressValue.make(key: key, seq: UInt64(thread) << 32 | UInt64(step), length: length), key)
            case 80..<92:
                try remove(key)
            default:
                try other(Int.random(in: 0..<1_000, using: &rng))
            }
        } catch {
            violations.record("\(key): \(error)")
        }
    }

    @Test(.timeLimit(.minutes(Reliability.minutes(6))))
    func diskCacheKeepsItsInvariantsUnderEightThreads() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.appending("cache")
            let countLimit = 200
            let sizeLimit = 1_500_000
            let cache = try DiskCache<Data>(
                directory: path,
                configuration: .init(
                    storage: .mixed(inlineThreshold: 4096), countLimit: countLimit, sizeLimit: sizeLimit, autoTrimInterval: .milliseconds(50)))
            let violations = Violations()
            let operations = Self.diskOperations
            let start = ContinuousClock.now
            await onThreads(Self.threads) { thread in
                var rng = SeededGenerator(seed: 0xD15C_0000 &+ UInt64(thread))
                for step in 0..<operations {
                    Self.diskOperation(
                        thread: thread, step: step, rng: &rng, violations: violations,
                        read: { try cache.value(forKey: $0) },
                        write: { try cache.setValue($0, forKey: $1) },
                        remove: { try cache.removeValue(forKey: $0) },
                        other: { choice in
                            switch choice {
                            case 0..<500: _ = try cache.contains("key-\(choice % 300)")
                            case 500..<980:
                                let count = try cache.count
                                let size = try cache.totalSize
                                if count > countLimit || size > sizeLimit { violations.record("count \(count), size \(size)") }
                            case 980..<998: try cache.trim(toCount: 150)
                            default: try cache.removeAll()
                            }
                        })
                }
            }
            let elapsed = ContinuousClock.now - start
            cache.autoTrimInterval = nil
            #expect(violations.count == 0, "\(violations.first)")
            #expect(try cache.count <= countLimit)
            #expect(try cache.totalSize <= sizeLimit)
            cache.waitForBackgroundWork()
            await cache.close()
            try expectConsistentDirectory(path, allowOrphans: false)
            let (count, bad) = try Self.checkEveryValue(path)
            #expect(bad.isEmpty, "\(bad.prefix(5))")
            print("Reliability concurrency DiskCache: \(Self.threads) threads × \(operations) operations in \(elapsed); " +
                  "final count \(count)")
        }
    }

    @Test(.timeLimit(.minutes(Reliability.minutes(6))))
    func tieredCacheKeepsItsInvariantsUnderEightThreads() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.appending("cache")
            let memory = MemoryCache<String, Data>(configuration: .init(countLimit: 100, costLimit: 400_000, autoTrimInterval: .milliseconds(5)))
            let disk = try DiskCache<Data>(
                directory: path,
                configuration: .init(
                    storage: .mixed(inlineThreshold: 4096), countLimit: 250, autoTrimInterval: .milliseconds(50)))
            let cache = try Cache<Data>(memory: memory, disk: disk)
            let violations = Violations()
            let operations = Self.diskOperations
            let start = ContinuousClock.now
            await onThreads(Self.threads) { thread in
                var rng = SeededGenerator(seed: 0x71E2_0000 &+ UInt64(thread))
                for step in 0..<operations {
                    Self.diskOperation(
                        thread: thread, step: step, rng: &rng, violations: violations,
                        read: { try cache.value(forKey: $0) },
                        write: { try cache.setValue($0, forKey: $1) },
                        remove: { try cache.removeValue(forKey: $0) },
                        other: { choice in
                            switch choice {
                            case 0..<900: _ = try cache.contains("key-\(choice % 300)")
                            case 900..<999: memory.trim(toCount: 20)
                            default: try cache.removeAll()
                            }
                        })
                }
            }
            let elapsed = ContinuousClock.now - start
            memory.autoTrimInterval = nil
            disk.autoTrimInterval = nil
            #expect(violations.count == 0, "\(violations.first)")
            // Memory never holds what disk doesn't, and agrees with it.
            var disagreements: [String] = []
            for (key, value, _) in memory.snapshot() {
                if try await disk.value(forKey: key) != value { disagreements.append(key) }
            }
            #expect(disagreements.isEmpty, "memory and disk disagree on \(disagreements.prefix(5))")
            #expect(memory.count <= 100 && memory.totalCost <= 400_000)
            #expect(memory.totalCost == memory.snapshot().reduce(0) { $0 + $1.cost })
            #expect(try disk.count <= 250)
            disk.waitForBackgroundWork()
            await disk.close()
            try expectConsistentDirectory(path, allowOrphans: false)
            let (count, bad) = try Self.checkEveryValue(path)
            #expect(bad.isEmpty, "\(bad.prefix(5))")
            print("Reliability concurrency Cache: \(Self.threads) threads × \(operations) operations in \(elapsed); " +
                  "final disk count \(count), memory count \(memory.count)")
        }
    }

    /// Reads every entry of the cache at `path`: each must be a whole value of its key.
    static func checkEveryValue(_ path: String) throws -> (count: Int, bad: [String]) {
        let storage = try openCheckingStorage(path)
        defer { storage.close() }
        var bad: [String] = []
        let keys = try storage.allKeys()
        for key in keys {
            guard let item = try storage.value(forKey: key), StressValue.seq(of: item.value, key: key) != nil else {
                bad.append(key)
                continue
            }
        }
        return (keys.count, bad)
    }
}
