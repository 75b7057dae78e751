import BenchSupport
import Foundation
import Synchronization

/// One timed region's outcome.
public struct PhaseSample: Sendable, Codable, Hashable {
    /// Wall-clock nanoseconds of the timed region.
    public var nanoseconds: UInt64
    /// Cache operations in the region (gets and sets).
    public var operations: Int
    /// Lookups among them, and how many found a value.
    public var lookups: Int
    public var hits: Int

    public var nanosecondsPerOperation: Double { Double(nanoseconds) / Double(max(operations, 1)) }
    public var hitPercent: Double? { lookups > 0 ? Double(hits) * 100 / Double(lookups) : nil }
}

/// A workload of the memory section: builds everything it needs (keys, operation
/// sequences) once, then runs against a fresh cache of any contender, timing only
/// the cache operations. One run can time several phases (set, then get-hit, then
/// get-miss on the same cache, as YYCache's benchmark does).
public protocol MemoryWorkload: Sendable {
    /// Phase names, in the order `run` returns their samples.
    var phases: [String] { get }
    /// One line saying what the workload does, for reports.
    var summary: String { get }
    /// The keys, addressed by index in the operations.
    var keys: [String] { get }
    func run<C: CacheUnderTest>(_ type: C.Type, policy: PolicyName, keys: C.PreparedKeys) -> [PhaseSample]
}

/// YYCache's benchmark: N distinct keys set into an empty cache, then all read
/// back (hits), then N keys never set read (misses). Limits are set but never
/// reached.
public struct SetGetWorkload: MemoryWorkload {
    public let count: Int
    public let keys: [String]
    public let limits: CacheLimits

    public init(count: Int) {
        self.count = count
        keys = (0..<(2 * count)).map { "key\($0)" }
        limits = CacheLimits(countLimit: max(1_000_000, 2 * count), costLimit: Int.max / 2)
    }

    public var phases: [String] { ["set", "get-hit", "get-miss"] }
    public var summary: String {
        "\(count.formatted()) distinct String keys (\"key0\"...): set into an empty cache, get each (hit), get \(count.formatted()) absent keys (miss); countLimit \(limits.countLimit.formatted()), costLimit Int.max/2, never reached"
    }

    public func run<C: CacheUnderTest>(_ type: C.Type, policy: PolicyName, keys: C.PreparedKeys) -> [PhaseSample] {
        let n = count
        let cache = C(limits: limits, policy: policy, keys: keys)

        let setStart = monotonicNanoseconds()
        for index in 0..<n {
            cache.set(index, cost: 0)
        }
        let setEnd = monotonicNanoseconds()

        var sum = 0
        var hits = 0
        let hitStart = monotonicNanoseconds()
        for index in 0..<n {
            if let value = cache.get(index) {
                hits &+= 1
                sum &+= value
            }
        }
        let hitEnd = monotonicNanoseconds()

        var missHits = 0
        let missStart = monotonicNanoseconds()
        for index in n..<(2 * n) {
            if let value = cache.get(index) {
                missHits &+= 1
                sum &+= value
            }
        }
        let missEnd = monotonicNanoseconds()
        blackHole(sum)
        withExtendedLifetime(cache) {}  // deallocation stays outside the timed regions

        return [
            PhaseSample(nanoseconds: setEnd - setStart, operations: n, lookups: 0, hits: 0),
            PhaseSample(nanoseconds: hitEnd - hitStart, operations: n, lookups: n, hits: hits),
            PhaseSample(nanoseconds: missEnd - missStart, operations: n, lookups: n, hits: missHits),
        ]
    }
}

/// A precomputed stream of cache-aside operations over a Zipf-popular key space:
/// reads (on a miss the key is set, as an application would after computing the
/// value) and writes (a set).
public struct ZipfOperations: Sendable {
    /// Each element is `keyIndex << 1 | isWrite`.
    public let encoded: [Int]

    public init(keyCount: Int, operations: Int, exponent: Double, readFraction: Double, seed: UInt64) {
        let zipf = ZipfDistribution(count: keyCount, exponent: exponent)
        var generator = SeededGenerator(seed: seed)
        // Popularity rank -> key index: a fixed shuffle, so that the hot keys are not
        // also the first keys created (which would flatter memory locality).
        var rankToKey = Array(0..<keyCount)
        var shuffler = SeededGenerator(seed: 0x5EED_0F_5EED)
        rankToKey.shuffle(using: &shuffler)
        var ops: [Int] = []
        ops.reserveCapacity(operations)
        for _ in 0..<operations {
            let key = rankToKey[zipf.sample(using: &generator)]
            let isWrite = generator.nextUnit() >= readFraction
            ops.append(key << 1 | (isWrite ? 1 : 0))
        }
        encoded = ops
    }

    /// Runs the stream against `cache`. Returns (lookups, hits, checksum).
    @inline(__always)
    func apply<C: CacheUnderTest>(to cache: C) -> (lookups: Int, hits: Int, sum: Int) {
        var lookups = 0, hits = 0, sum = 0
        for op in encoded {
            let index = op >> 1
            if op & 1 == 1 {
                cache.set(index, cost: 0)
            } else {
                lookups &+= 1
                if let value = cache.get(index) {
                    hits &+= 1
                    sum &+= value
                } else {
                    cache.set(index, cost: 0)
                }
            }
        }
        return (lookups, hits, sum)
    }
}

/// A Zipf (s = 0.99) cache-aside mix, 80% reads, 20% writes, with a countLimit
/// of 10% of the keys, from an empty cache. Reports throughput and hit ratio.
public struct ZipfMixWorkload: MemoryWorkload {
    public let keyCount: Int
    public let operationCount: Int
    public let exponent: Double
    public let readFraction: Double
    public let keys: [String]
    public let limits: CacheLimits
    public let operations: ZipfOperations

    public init(keyCount: Int, operations: Int, exponent: Double = 0.99, readFraction: Double = 0.8,
                capacityFraction: Double = 0.1, seed: UInt64) {
        self.keyCount = keyCount
        self.operationCount = operations
        self.exponent = exponent
        self.readFraction = readFraction
        keys = (0..<keyCount).map { "key\($0)" }
        limits = CacheLimits(countLimit: max(1, Int(Double(keyCount) * capacityFraction)), costLimit: Int.max / 2)
        self.operations = ZipfOperations(keyCount: keyCount, operations: operations, exponent: exponent,
                                         readFraction: readFraction, seed: seed)
    }

    public var phases: [String] { ["zipf 80/20"] }
    public var summary: String {
        "\(operationCount.formatted()) operations over \(keyCount.formatted()) keys, Zipf s = \(exponent), \(Int(readFraction * 100))% reads (miss -> set) / \(100 - Int(readFraction * 100))% writes, countLimit \(limits.countLimit.formatted()) (10% of the keys), seeded; from an empty cache"
    }

    public func run<C: CacheUnderTest>(_ type: C.Type, policy: PolicyName, keys: C.PreparedKeys) -> [PhaseSample] {
        let cache = C(limits: limits, policy: policy, keys: keys)
        let start = monotonicNanoseconds()
        let outcome = operations.apply(to: cache)
        let end = monotonicNanoseconds()
        blackHole(outcome.sum)
        withExtendedLifetime(cache) {}
        return [PhaseSample(nanoseconds: end - start, operations: operations.encoded.count,
                            lookups: outcome.lookups, hits: outcome.hits)]
    }
}

/// Sets of keys with varied costs (uniform in 1...1000, seeded) under a cost
/// limit of a quarter of their total, so that most sets evict. Foundation's
/// NSCache on Linux keeps its entries in a list sorted by cost, so each insert
/// there walks the list: O(n).
public struct VariedCostWorkload: MemoryWorkload {
    public let count: Int
    public let keys: [String]
    public let costs: [Int]
    public let limits: CacheLimits

    public init(count: Int, seed: UInt64) {
        self.count = count
        keys = (0..<count).map { "key\($0)" }
        var generator = SeededGenerator(seed: seed)
        costs = (0..<count).map { _ in Int(generator.next() % 1000) + 1 }
        limits = CacheLimits(countLimit: .max, costLimit: costs.reduce(0, +) / 4)
    }

    public var phases: [String] { ["cost-limited set"] }
    public var summary: String {
        "\(count.formatted()) sets of distinct keys, costs uniform in 1...1000 (seeded), costLimit = a quarter of the total cost (\(limits.costLimit.formatted())), no countLimit"
    }

    public func run<C: CacheUnderTest>(_ type: C.Type, policy: PolicyName, keys: C.PreparedKeys) -> [PhaseSample] {
        let cache = C(limits: limits, policy: policy, keys: keys)
        let n = count
        let start = monotonicNanoseconds()
        costs.withUnsafeBufferPointer { costs in
            for index in 0..<n {
                cache.set(index, cost: costs[index])
            }
        }
        let end = monotonicNanoseconds()
        withExtendedLifetime(cache) {}
        return [PhaseSample(nanoseconds: end - start, operations: n, lookups: 0, hits: 0)]
    }
}

/// Two (or more) threads on one shared cache, each running its own seeded
/// Zipf 80/20 stream over the same keys, countLimit 10% of the keys. The figure
/// is total operations over the wall time from the first thread's start to the
/// last thread's end.
public struct ContendedWorkload: MemoryWorkload {
    public let threadCount: Int
    public let keyCount: Int
    public let operationsPerThread: Int
    public let keys: [String]
    public let limits: CacheLimits
    public let streams: [ZipfOperations]

    public init(threads: Int, keyCount: Int, operationsPerThread: Int, seed: UInt64) {
        threadCount = threads
        self.keyCount = keyCount
        self.operationsPerThread = operationsPerThread
        keys = (0..<keyCount).map { "key\($0)" }
        limits = CacheLimits(countLimit: max(1, keyCount / 10), costLimit: Int.max / 2)
        streams = (0..<threads).map {
            ZipfOperations(keyCount: keyCount, operations: operationsPerThread, exponent: 0.99,
                           readFraction: 0.8, seed: seed &+ UInt64($0) &* 7919)
        }
    }

    public var phases: [String] { ["\(threadCount) threads"] }
    public var summary: String {
        "\(threadCount) threads share one cache, each \(operationsPerThread.formatted()) ops of its own seeded Zipf 0.99 80/20 stream over \(keyCount.formatted()) keys, countLimit \(limits.countLimit.formatted()); total ops / wall time"
    }

    public func run<C: CacheUnderTest>(_ type: C.Type, policy: PolicyName, keys: C.PreparedKeys) -> [PhaseSample] {
        let cache = C(limits: limits, policy: policy, keys: keys)
        let outcome = StartGate.runTogether(threadCount) { thread in
            let outcome = streams[thread].apply(to: cache)
            return (outcome.lookups, outcome.hits, outcome.sum)
        }
        withExtendedLifetime(cache) {}
        blackHole(outcome.sum)
        return [PhaseSample(nanoseconds: outcome.nanoseconds, operations: threadCount * operationsPerThread,
                            lookups: outcome.lookups, hits: outcome.hits)]
    }
}
