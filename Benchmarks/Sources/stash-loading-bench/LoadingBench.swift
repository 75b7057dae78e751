// stash-loading-bench: the get-or-load API's two speed targets (issue #16), side by side in
// one run, rounds interleaved, medians:
// - a hit through `value(forKey:orLoad:)` against a plain `value(forKey:)` hit of the same
//   entries (target: at most 1.2×);
// - 1,000 tasks asking at once for one missing key whose loader takes a fixed time, from the
//   first call to the last answer, against the loader's own time (target: at most 2×).
//
// usage: stash-loading-bench [--rounds N] [--quick] [--only hits|stampede] [--loader-ms N]
//   --only: run one of the two parts; --loader-ms: one stampede loader time instead of 1, 10 and 50 ms.
import BenchSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Stash
import StashBenchKit

/// What a loader typically captures: the source it reads from.
final class Source: Sendable {
    let base: Int
    init(base: Int) { self.base = base }
    func value(for key: Int) -> Int { base &+ key }
}

@main
struct LoadingBench {
    static func main() async throws {
        try await run()
    }

    /// Nonisolated, so the timed loops run on the cooperative pool without a main-actor hop per call.
    nonisolated static func run() async throws {
        let arguments = CommandLine.arguments
        let quick = arguments.contains("--quick")
        let rounds = value(after: "--rounds", in: arguments).flatMap { Int($0) } ?? (quick ? 5 : 11)
        let only = value(after: "--only", in: arguments)
        if arguments.contains("--help") || (only != nil && only != "hits" && only != "stampede") {
            print("usage: stash-loading-bench [--rounds N] [--quick] [--only hits|stampede] [--loader-ms N]")
            return
        }
        if only != "stampede" { try await measureHits(rounds: rounds, quick: quick) }
        if only != "hits" {
            let sleeps = value(after: "--loader-ms", in: arguments).flatMap { Int($0) }.map { [$0] } ?? [1, 10, 50]
            try await measureStampedes(rounds: rounds, loaderMilliseconds: sleeps)
        }
    }

    nonisolated static func measureHits(rounds: Int, quick: Bool) async throws {
        let keyCount = 1_000
        let lookups = quick ? 200_000 : 1_000_000
        let source = Source(base: 7)
        // Hits: the same entries, read through both APIs, in an async context both times. Three
        // loaders: a closure capturing an object (the usual case, and the target's figure), one
        // capturing nothing, and one capturing two values (whose context an escaping closure
        // would allocate at each call).
        let cache = MemoryCache<Int, Int>(configuration: .init(autoTrimInterval: nil))
        for key in 0..<keyCount { cache.setValue(source.value(for: key), forKey: key) }
        let offset = Int(CommandLine.arguments.count)
        var times: [[Double]] = [[], [], [], []]
        for round in 0..<rounds {
            for turn in 0..<4 {
                let contender = (round + turn) % 4
                var checksum = 0
                let start = monotonicNanoseconds()
                switch contender {
                case 0:
                    for index in 0..<lookups {
                        checksum &+= cache.value(forKey: index % keyCount) ?? 0
                    }
                case 1:
                    for index in 0..<lookups {
                        checksum &+= try await cache.value(forKey: index % keyCount) { key in source.value(for: key) }
                    }
                case 2:
                    for index in 0..<lookups {
                        checksum &+= try await cache.value(forKey: index % keyCount) { key in key &+ 7 }
                    }
                default:
                    for index in 0..<lookups {
                        checksum &+= try await cache.value(forKey: index % keyCount) { key in
                            source.value(for: key) &+ offset
                        }
                    }
                }
                times[contender].append(Double(monotonicNanoseconds() - start) / Double(lookups))
                blackHole(checksum)
            }
        }
        let plain = times[0]
        print("stash-loading-bench: \(rounds) rounds, interleaved; medians (min … max)")
        print("hit, value(forKey:)                         \(range(plain)) ns")
        let labels = ["", "orLoad, loader capturing one object", "orLoad, loader capturing nothing",
                      "orLoad, loader capturing two values"]
        for contender in 1..<4 {
            let ratio = median(times[contender]) / median(plain)
            let verdict = contender == 1 ? "  target ≤ 1.20×  \(ratio <= 1.2 ? "PASS" : "FAIL")" : ""
            print("hit, \(labels[contender].padding(toLength: 38, withPad: " ", startingAt: 0)) \(range(times[contender])) ns  ratio \(format2(ratio))×\(verdict)")
        }

        // Cache (memory in front of disk; memory only here, so that a hit never reaches a disk):
        // a memory hit through Cache's value(forKey:), synchronous and async, and through its
        // value(forKey:orLoad:).
        let tiered = try Cache<Int>(
            memory: MemoryCache<String, Int>(configuration: .init(autoTrimInterval: nil)), disk: nil)
        let stringKeys = (0..<keyCount).map { "key-\($0)" }
        try fill(tiered, stringKeys)
        // Each loop in a function of its own, so that one's code does not change how the others
        // are inlined and laid out.
        var tieredTimes: [[Double]] = [[], [], []]
        for round in 0..<rounds {
            for turn in 0..<3 {
                let contender = (round + turn) % 3
                let start = monotonicNanoseconds()
                let checksum = switch contender {
                case 0: try plainHits(tiered, stringKeys, lookups)
                case 1: try await orLoadHits(tiered, stringKeys, lookups, source)
                default: try await asyncHits(tiered, stringKeys, lookups)
                }
                tieredTimes[contender].append(Double(monotonicNanoseconds() - start) / Double(lookups))
                blackHole(checksum)
            }
        }
        let tieredRatio = median(tieredTimes[1]) / median(tieredTimes[0])
        let asyncRatio = median(tieredTimes[2]) / median(tieredTimes[0])
        print("Cache hit, value(forKey:)                   \(range(tieredTimes[0])) ns")
        print("Cache hit, async value(forKey:)             \(range(tieredTimes[2])) ns  ratio \(format2(asyncRatio))×")
        print("Cache hit, orLoad, loader capturing one object \(range(tieredTimes[1])) ns  ratio \(format2(tieredRatio))×  target ≤ 1.20×  \(tieredRatio <= 1.2 ? "PASS" : "FAIL")")
    }

    nonisolated static func measureStampedes(rounds: Int, loaderMilliseconds sleeps: [Int]) async throws {
        // Stampedes: 1,000 callers, one key, a loader of fixed time; beside two floors built from
        // the same task group: the same 1,000 tasks, each returning at once (what creating and
        // joining them costs), and a bare single flight (the first task runs the loader, the rest
        // wait on a continuation each, all resumed when it ends: no cache, no options, no timers).
        let callers = 1_000
        for loaderMilliseconds in sleeps {
            var totals: [Double] = []
            var loaderTimes: [Double] = []
            var bare: [Double] = []
            var spawnOnly: [Double] = []
            for round in 0..<rounds {
                let sleep = UInt64(loaderMilliseconds) * 1_000_000
                for turn in 0..<3 {
                    switch (round + turn) % 3 {
                    case 0:
                        let stampeded = MemoryCache<Int, Int>(configuration: .init(autoTrimInterval: nil))
                        let loaderTime = LoaderTime()
                        let start = monotonicNanoseconds()
                        try await withThrowingTaskGroup(of: Int.self) { group in
                            for _ in 0..<callers {
                                group.addTask {
                                    try await stampeded.value(forKey: round) { key in
                                        let began = monotonicNanoseconds()
                                        try await Task.sleep(nanoseconds: sleep)
                                        loaderTime.record(monotonicNanoseconds() - began)
                                        return key
                                    }
                                }
                            }
                            for try await value in group where value != round { fatalError("wrong value") }
                        }
                        totals.append(Double(monotonicNanoseconds() - start))
                        loaderTimes.append(Double(loaderTime.nanoseconds))
                        if loaderTime.calls != 1 { fatalError("\(loaderTime.calls) loads for one key") }
                    case 1:
                        let flight = BareFlight()
                        let start = monotonicNanoseconds()
                        try await withThrowingTaskGroup(of: Int.self) { group in
                            for _ in 0..<callers {
                                group.addTask {
                                    try await flight.value {
                                        try await Task.sleep(nanoseconds: sleep)
                                        return round
                                    }
                                }
                            }
                            for try await value in group where value != round { fatalError("wrong value") }
                        }
                        bare.append(Double(monotonicNanoseconds() - start))
                    default:
                        let start = monotonicNanoseconds()
                        await withTaskGroup(of: Int.self) { group in
                            for _ in 0..<callers {
                                group.addTask { round }
                            }
                            for await value in group where value != round { fatalError("wrong value") }
                        }
                        spawnOnly.append(Double(monotonicNanoseconds() - start))
                    }
                }
            }
            let ratio = median(totals) / median(loaderTimes)
            print("stampede, \(callers) callers, \(loaderMilliseconds) ms loader: all answered in \(format2(median(totals) / 1e6)) ms, loader \(format2(median(loaderTimes) / 1e6)) ms, ratio \(format2(ratio))×  target ≤ 2×  \(ratio <= 2 ? "PASS" : "FAIL")  (1 load each round)")
            print("  floors: bare single flight \(format2(median(bare) / 1e6)) ms (\(format2(median(bare) / median(loaderTimes)))× the loader); \(callers) tasks returning at once \(format2(median(spawnOnly) / 1e6)) ms; Stash over the bare flight \(format2((median(totals) - median(bare)) / 1e6)) ms")
        }
    }

    /// Cache's synchronous writes and reads (in an async context the async overloads win).
    static func fill(_ cache: Cache<Int>, _ keys: [String]) throws {
        for (index, key) in keys.enumerated() { try cache.setValue(index, forKey: key) }
    }

    @inline(never)
    static func plainHits(_ cache: Cache<Int>, _ keys: [String], _ lookups: Int) throws -> Int {
        var checksum = 0
        for index in 0..<lookups {
            checksum &+= try cache.value(forKey: keys[index % keys.count]) ?? 0
        }
        return checksum
    }

    /// Cache's async `value(forKey:)`, in an async context.
    @inline(never)
    nonisolated static func asyncHits(_ cache: Cache<Int>, _ keys: [String], _ lookups: Int) async throws -> Int {
        var checksum = 0
        for index in 0..<lookups {
            checksum &+= try await cache.value(forKey: keys[index % keys.count]) ?? 0
        }
        return checksum
    }

    /// Cache's get-or-load, with a loader closure capturing one object.
    @inline(never)
    nonisolated static func orLoadHits(
        _ cache: Cache<Int>, _ keys: [String], _ lookups: Int, _ source: Source
    ) async throws -> Int {
        var checksum = 0
        for index in 0..<lookups {
            checksum &+= try await cache.value(forKey: keys[index % keys.count]) { _ in source.base }
        }
        return checksum
    }

    static func range(_ values: [Double]) -> String {
        "\(format(median(values))) (\(format(values.min()!)) … \(format(values.max()!)))"
    }

    static func value(after flag: String, in arguments: [String]) -> String? {
        guard let index = arguments.firstIndex(of: flag), index + 1 < arguments.count else { return nil }
        return arguments[index + 1]
    }

    static func format(_ value: Double) -> String { String(Int(value.rounded())) }
    static func format2(_ value: Double) -> String { String(Double(Int((value * 100).rounded())) / 100) }
}

/// The loader's own time and how many times it ran.
final class LoaderTime: @unchecked Sendable {
    // @unchecked Sendable: both fields are read and written only under `lock`.
    private let lock = PThreadLock()
    private var total: UInt64 = 0
    private var count = 0

    func record(_ nanoseconds: UInt64) {
        lock.withLock {
            total += nanoseconds
            count += 1
        }
    }

    var nanoseconds: UInt64 { lock.withLock { total } }
    var calls: Int { lock.withLock { count } }
}

/// The floor of a stampede: the first caller runs the load, every other caller waits on a
/// continuation of its own, and all are resumed with the result when the load ends. No cache, no
/// options, no timers, no cancellation: the least that one-load-for-many costs in Swift.
final class BareFlight: @unchecked Sendable {
    // @unchecked Sendable: `waiters`, `result` and `isLoading` are read and written only under `lock`.
    private let lock = PThreadLock()
    private var waiters: [CheckedContinuation<Int, any Error>] = []
    private var result: Int?
    private var isLoading = false

    func value(load: @Sendable () async throws -> Int) async throws -> Int {
        let leads = lock.withLock { () -> Bool in
            if isLoading || result != nil { return false }
            isLoading = true
            return true
        }
        if leads {
            let value = try await load()
            let waiting = lock.withLock { () -> [CheckedContinuation<Int, any Error>] in
                result = value
                defer { waiters = [] }
                return waiters
            }
            for waiter in waiting { waiter.resume(returning: value) }
            return value
        }
        return try await withCheckedThrowingContinuation { continuation in
            let done = lock.withLock { () -> Int? in
                if let result { return result }
                waiters.append(continuation)
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
    }
}
