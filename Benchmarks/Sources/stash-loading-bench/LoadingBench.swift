// stash-loading-bench: the get-or-load API's two speed targets (issue #16), side by side in
// one run, rounds interleaved, medians:
// - a hit through `value(forKey:orLoad:)` against a plain `value(forKey:)` hit of the same
//   entries (target: at most 1.2×);
// - 1,000 tasks asking at once for one missing key whose loader takes a fixed time, from the
//   first call to the last answer, against the loader's own time (target: at most 2×).
//
// usage: stash-loading-bench [--rounds N] [--quick]
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
        let keyCount = 1_000
        let lookups = quick ? 200_000 : 1_000_000
        let source = Source(base: 7)

        // Hits: the same entries, read through both APIs, in an async context both times.
        let cache = MemoryCache<Int, Int>(configuration: .init(autoTrimInterval: nil))
        for key in 0..<keyCount { cache.setValue(source.value(for: key), forKey: key) }
        var plain: [Double] = []
        var orLoad: [Double] = []
        for round in 0..<rounds {
            for turn in 0..<2 {
                var checksum = 0
                let start = monotonicNanoseconds()
                if (round + turn) % 2 == 0 {
                    for index in 0..<lookups {
                        checksum &+= cache.value(forKey: index % keyCount) ?? 0
                    }
                    plain.append(Double(monotonicNanoseconds() - start) / Double(lookups))
                } else {
                    for index in 0..<lookups {
                        checksum &+= try await cache.value(forKey: index % keyCount) { key in source.value(for: key) }
                    }
                    orLoad.append(Double(monotonicNanoseconds() - start) / Double(lookups))
                }
                blackHole(checksum)
            }
        }
        let hitRatio = median(orLoad) / median(plain)
        print("stash-loading-bench: \(rounds) rounds, interleaved; medians (min … max)")
        print("hit, value(forKey:)            \(format(median(plain))) ns  (\(format(plain.min()!)) … \(format(plain.max()!)))")
        print("hit, value(forKey:orLoad:)     \(format(median(orLoad))) ns  (\(format(orLoad.min()!)) … \(format(orLoad.max()!)))")
        print("  ratio \(format2(hitRatio))×  target ≤ 1.20×  \(hitRatio <= 1.2 ? "PASS" : "FAIL")")

        // Stampedes: 1,000 callers, one key, a loader of fixed time.
        let callers = 1_000
        for loaderMilliseconds in [1, 10, 50] {
            var totals: [Double] = []
            var loaderTimes: [Double] = []
            for round in 0..<rounds {
                let stampeded = MemoryCache<Int, Int>(configuration: .init(autoTrimInterval: nil))
                let loaderTime = LoaderTime()
                let start = monotonicNanoseconds()
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<callers {
                        group.addTask {
                            try await stampeded.value(forKey: round) { key in
                                let began = monotonicNanoseconds()
                                try await Task.sleep(nanoseconds: UInt64(loaderMilliseconds) * 1_000_000)
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
            }
            let ratio = median(totals) / median(loaderTimes)
            print("stampede, \(callers) callers, \(loaderMilliseconds) ms loader: all answered in \(format(median(totals) / 1e6)) ms, loader \(format(median(loaderTimes) / 1e6)) ms, ratio \(format2(ratio))×  target ≤ 2×  \(ratio <= 2 ? "PASS" : "FAIL")  (1 load each round)")
        }
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
