import BenchSupport
import Foundation
import Stash
import Synchronization

// Issue #26: throughput that grows with cores. 1, 2 and 4 threads share one
// cache; each runs its own seeded Zipf(0.99) stream over the same keys. The
// floors run in the same rounds: a Dictionary behind one pthread mutex, and 64
// Dictionaries each behind its own mutex, chosen by key hash.

/// One shared cache under test by several threads at once: `Int` keys and values.
public protocol ContentionContender: AnyObject, Sendable {
    static var displayName: String { get }
    init(countLimit: Int)
    func get(_ key: Int) -> Int?
    func set(_ key: Int, _ value: Int)
}

/// `MemoryCache<Int, Int>` with its defaults (S3-FIFO) and a count limit.
public final class ContendedMemoryCache: ContentionContender {
    public static var displayName: String { "MemoryCache" }
    let cache: MemoryCache<Int, Int>
    public init(countLimit: Int) { cache = MemoryCache(countLimit: countLimit) }
    @inline(__always) public func get(_ key: Int) -> Int? { cache.value(forKey: key) }
    @inline(__always) public func set(_ key: Int, _ value: Int) { cache.setValue(value, forKey: key) }
}

/// `MemoryCache<String, Int>`: the memory tier of ``ContendedTieredCache`` alone, with
/// the same key conversion, so that the two compare like for like.
public final class ContendedStringMemoryCache: ContentionContender {
    public static var displayName: String { "MemoryCache<String>" }
    let cache: MemoryCache<String, Int>
    public init(countLimit: Int) { cache = MemoryCache(countLimit: countLimit) }
    @inline(__always) public func get(_ key: Int) -> Int? { cache.value(forKey: String(key)) }
    @inline(__always) public func set(_ key: Int, _ value: Int) { cache.setValue(value, forKey: String(key)) }
}

/// The tiered `Cache<Int>` with a memory tier only (count limit as above): its
/// memory hits, and its writes through the key stripes.
public final class ContendedTieredCache: ContentionContender {
    public static var displayName: String { "Cache (memory tier)" }
    let cache: Cache<Int>
    public init(countLimit: Int) {
        // A memory tier is given, so the initialiser cannot throw.
        cache = try! Cache(memory: MemoryCache(countLimit: countLimit), disk: nil)
    }
    @inline(__always) public func get(_ key: Int) -> Int? { try? cache.value(forKey: String(key)) ?? nil }
    @inline(__always) public func set(_ key: Int, _ value: Int) { try? cache.setValue(value, forKey: String(key)) }
}

/// The floor: one `Dictionary` behind one pthread mutex; no limit, no eviction.
public final class ContendedLockedDictionary: ContentionContender, @unchecked Sendable {
    // @unchecked Sendable: `storage` is only touched with `lock` held.
    public static var displayName: String { "Dictionary+lock" }
    private let lock = PThreadLock()
    private var storage: [Int: Int] = [:]
    public init(countLimit: Int) {}
    @inline(__always) public func get(_ key: Int) -> Int? { lock.withLock { storage[key] } }
    @inline(__always) public func set(_ key: Int, _ value: Int) { lock.withLock { storage[key] = value } }
}

/// The striped floor: 64 `Dictionary`s, each behind its own pthread mutex,
/// chosen by the key's hash; no limit, no eviction. Twenty lines that scale.
public final class ContendedStripedDictionary: ContentionContender, @unchecked Sendable {
    // @unchecked Sendable: each stripe's dictionary is only touched with that stripe's lock held.
    public static var displayName: String { "64 × Dictionary+lock" }
    private final class Stripe: @unchecked Sendable {
        // @unchecked Sendable: `storage` is only touched with `lock` held.
        let lock = PThreadLock()
        var storage: [Int: Int] = [:]
    }
    private let stripes = (0..<64).map { _ in Stripe() }
    public init(countLimit: Int) {}
    @inline(__always) private func stripe(_ key: Int) -> Stripe { stripes[key.hashValue & 63] }
    @inline(__always) public func get(_ key: Int) -> Int? {
        let stripe = stripe(key)
        return stripe.lock.withLock { stripe.storage[key] }
    }
    @inline(__always) public func set(_ key: Int, _ value: Int) {
        let stripe = stripe(key)
        stripe.lock.withLock { stripe.storage[key] = value }
    }
}

/// The settings of the contention section.
public struct ContentionPlan: Sendable, Codable {
    public var keyCount = 100_000
    public var countLimit = 50_000
    public var operationsPerThread = 2_000_000
    public var threadCounts = [1, 2, 4]
    public var rounds = 5
    public var seed: UInt64 = 20_240_601
    /// The contenders to run, by display name; empty for all.
    public var contenders: [String] = []

    public init(quick: Bool, rounds: Int?, seed: UInt64) {
        if quick { operationsPerThread = 200_000 }
        self.rounds = max(rounds ?? 5, 5)
        self.seed = seed
    }
}

/// One operation mix: the share of operations that are `setValue` (the rest are
/// `value(forKey:)`, a miss followed by a `setValue`).
public struct ContentionMix: Sendable, Codable {
    public var name: String
    public var setPercent: Int
}

/// The throughput of one contender at one thread count in one mix, every round.
public struct ContentionFigure: Sendable, Codable {
    public var mix: String
    public var contender: String
    public var threads: Int
    /// Million operations per second (all threads' operations / wall time), one per round.
    public var mops: [Double]
    public var hitPercent: [Double]
    public var best: Double { mops.max() ?? 0 }
    public var median: Double { mops.isEmpty ? 0 : BenchSupport.median(mops) }
}

public struct ContentionReport: Sendable, Codable {
    public var plan: ContentionPlan
    public var mixes: [ContentionMix]
    public var figures: [ContentionFigure]
    public var loadAverageAtStart: String
    public var loadAverageAtEnd: String
    /// DiskCache reads against threads, when that part ran.
    public var diskReads: DiskReadContentionReport?

    public init(plan: ContentionPlan, mixes: [ContentionMix], figures: [ContentionFigure], loadAverageAtStart: String,
                loadAverageAtEnd: String, diskReads: DiskReadContentionReport? = nil) {
        (self.plan, self.mixes, self.figures) = (plan, mixes, figures)
        (self.loadAverageAtStart, self.loadAverageAtEnd, self.diskReads) = (loadAverageAtStart, loadAverageAtEnd, diskReads)
    }

    public func figure(_ mix: String, _ contender: String, _ threads: Int) -> ContentionFigure? {
        figures.first { $0.mix == mix && $0.contender == contender && $0.threads == threads }
    }
}

/// A thread's operations, encoded as key << 1 | isSet.
struct ContentionStream: Sendable {
    let operations: [Int]

    init(keyCount: Int, operations count: Int, setPercent: Int, zipf: ZipfDistribution, seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        var encoded = [Int]()
        encoded.reserveCapacity(count)
        // Ranks are scattered over the key space so that popular keys do not sit together.
        for _ in 0..<count {
            let rank = zipf.sample(using: &generator)
            let key = (rank &* 40_503) % keyCount
            let isSet = Int(generator.next() % 100) < setPercent
            encoded.append(key << 1 | (isSet ? 1 : 0))
        }
        operations = encoded
    }

    /// Runs the stream; returns (lookups, hits, checksum).
    @inline(__always)
    func apply<C: ContentionContender>(to cache: C) -> (lookups: Int, hits: Int, sum: Int) {
        var (lookups, hits, sum) = (0, 0, 0)
        operations.withUnsafeBufferPointer { ops in
            for op in ops {
                let key = op >> 1
                if op & 1 == 1 {
                    cache.set(key, key)
                } else {
                    lookups += 1
                    if let value = cache.get(key) {
                        hits += 1
                        sum &+= value
                    } else {
                        cache.set(key, key)
                    }
                }
            }
        }
        return (lookups, hits, sum)
    }
}

/// Runs `streams` on one fresh `C`, one thread each, started together.
/// Returns million operations per second over the wall time from the first
/// thread's start to the last thread's end, and the hit percentage.
func runContended<C: ContentionContender>(_ type: C.Type, countLimit: Int, streams: ArraySlice<ContentionStream>)
    -> (mops: Double, hitPercent: Double) {
    let cache = C(countLimit: countLimit)
    let outcome = StartGate.runTogether(streams.count) { thread in
        let outcome = streams[streams.startIndex + thread].apply(to: cache)
        return (outcome.lookups, outcome.hits, outcome.sum)
    }
    withExtendedLifetime(cache) {}
    blackHole(outcome.sum)
    let operations = streams.reduce(0) { $0 + $1.operations.count }
    return (Double(operations) / Double(max(outcome.nanoseconds, 1)) * 1_000,
            outcome.lookups == 0 ? 0 : Double(outcome.hits) * 100 / Double(outcome.lookups))
}

/// Measures every contender at every thread count in every mix, interleaved:
/// each round runs them all once, so noise on the machine hits all alike.
public func measureContention(_ plan: ContentionPlan, progress: ProgressHandler?) -> ContentionReport {
    let mixes = [ContentionMix(name: "read-heavy", setPercent: 5), ContentionMix(name: "write-heavy", setPercent: 50)]
    let allContenders: [(name: String, run: (ArraySlice<ContentionStream>) -> (mops: Double, hitPercent: Double))] = [
        (ContendedMemoryCache.displayName, { runContended(ContendedMemoryCache.self, countLimit: plan.countLimit, streams: $0) }),
        (ContendedLockedDictionary.displayName, { runContended(ContendedLockedDictionary.self, countLimit: plan.countLimit, streams: $0) }),
        (ContendedStripedDictionary.displayName, { runContended(ContendedStripedDictionary.self, countLimit: plan.countLimit, streams: $0) }),
        (ContendedStringMemoryCache.displayName, { runContended(ContendedStringMemoryCache.self, countLimit: plan.countLimit, streams: $0) }),
        (ContendedTieredCache.displayName, { runContended(ContendedTieredCache.self, countLimit: plan.countLimit, streams: $0) }),
    ]
    let contenders = allContenders.filter { plan.contenders.isEmpty || plan.contenders.contains($0.name) }
    let zipf = ZipfDistribution(count: plan.keyCount, exponent: 0.99)
    let maxThreads = plan.threadCounts.max() ?? 1
    let loadAtStart = MachineInfo.loadAverage()
    var figures: [ContentionFigure] = []
    for (mixIndex, mix) in mixes.enumerated() {
        progress?("contention: generating \(mix.name) streams")
        let streams = (0..<maxThreads).map { thread in
            ContentionStream(keyCount: plan.keyCount, operations: plan.operationsPerThread, setPercent: mix.setPercent,
                             zipf: zipf, seed: plan.seed &+ UInt64(mixIndex) &* 104_729 &+ UInt64(thread) &* 7919)
        }
        for contender in contenders {
            for threads in plan.threadCounts {
                figures.append(ContentionFigure(mix: mix.name, contender: contender.name, threads: threads, mops: [],
                                                hitPercent: []))
            }
        }
        for round in 0..<plan.rounds {
            for threads in plan.threadCounts {
                for contender in contenders {
                    progress?("contention: \(mix.name), round \(round + 1)/\(plan.rounds), \(contender.name), \(threads) threads")
                    let result = contender.run(streams[0..<threads])
                    let index = figures.firstIndex {
                        $0.mix == mix.name && $0.contender == contender.name && $0.threads == threads
                    }!
                    figures[index].mops.append(result.mops)
                    figures[index].hitPercent.append(result.hitPercent)
                }
            }
        }
    }
    return ContentionReport(plan: plan, mixes: mixes, figures: figures, loadAverageAtStart: loadAtStart,
                            loadAverageAtEnd: MachineInfo.loadAverage())
}
