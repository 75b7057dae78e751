#if AsyncHTTPClient
// stash-http-client-bench: CachingHTTPClient against a real origin on 127.0.0.1 (BenchOrigin),
// one request at a time, interleaved with its baselines in every round, medians. A target of the
// root package, not of Benchmarks/, so that a release build reuses the SwiftNIO and
// AsyncHTTPClient modules scripts/http-bench/run.sh already builds for stash-proxy:
//
//   swift build -c release --scratch-path .build-release --product stash-http-client-bench
//   .build-release/release/stash-http-client-bench [--rounds N] [--quick]
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import AsyncHTTPClient
import NIOCore
import Stash
import StashAsyncHTTPClient
import StashHTTP

/// What it measures:
///
/// - A fresh hit of a 1 KB response beside a plain `MemoryCache` lookup of a 1 KB entry: what the
///   adapter costs over the cheapest possible cache (issue #15: at most 50 µs more).
/// - A stored response revalidated with a `304` beside a full `200` fetch of the same body by the
///   bare `HTTPClient`, and beside a `.reload` through the cache (a `200` fetched and stored), for a
///   1 KB and a 100 KB body. Every response body is read whole.
@main
enum ClientBench {
    static func main() async throws {
        let arguments = CommandLine.arguments
        let quick = arguments.contains("--quick")
        let rounds = arguments.firstIndex(of: "--rounds").flatMap { $0 + 1 < arguments.count ? Int(arguments[$0 + 1]) : nil } ?? (quick ? 3 : 11)
        try await run(rounds: rounds, scale: quick ? 10 : 1)
    }

    static func run(rounds: Int, scale: Int) async throws {
        let sizes = [1024, 100 * 1024]
        let origin = try await BenchOrigin(sizes: sizes)
        var clientConfiguration = HTTPClient.Configuration()
        clientConfiguration.redirectConfiguration = .disallow
        clientConfiguration.decompression = .disabled
        let httpClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        var cacheConfiguration = HTTPCache.Configuration(mode: .private)
        cacheConfiguration.memoryCostLimit = 512 << 20
        cacheConfiguration.memoryCountLimit = 1_000_000
        let client = CachingHTTPClient(client: httpClient, cache: try HTTPCache(configuration: cacheConfiguration))
        let base = "http://127.0.0.1:\(origin.port)"
        let timeout = TimeAmount.seconds(30)

        let plain = MemoryCache<String, [UInt8]>(configuration: .init(autoTrimInterval: nil))
        plain.setValue([UInt8](repeating: 0x61, count: 1024), forKey: "GET \(base)/fresh/1024")

        func bytes(_ body: HTTPClientResponse.Body) async throws -> Int {
            try await body.collect(upTo: 1 << 30).readableBytes
        }
        // Store what the timed loops read, and check each path answers as it should.
        let freshRequest = HTTPClientRequest(url: "\(base)/fresh/1024")
        let warm = try await client.execute(freshRequest, timeout: timeout)
        _ = try await bytes(warm.body)
        let hit = try await client.execute(freshRequest, policy: .useProtocolPolicy, timeout: timeout)
        let hitBytes = try await bytes(hit.body)
        precondition(hit.outcome == .hit && hitBytes == 1024, "the fresh URL is not a hit")
        for size in sizes {
            let request = HTTPClientRequest(url: "\(base)/validate/\(size)")
            _ = try await bytes(try await client.execute(request, timeout: timeout).body)
            let again = try await client.execute(request, policy: .useProtocolPolicy, timeout: timeout)
            let againBytes = try await bytes(again.body)
            precondition(again.outcome == .revalidated && againBytes == size, "the validated URL is not revalidated")
        }

        var names = ["MemoryCache lookup (1 KB)", "CachingHTTPClient fresh hit (1 KB)"]
        for size in sizes {
            names += ["HTTPClient full fetch, 200 (\(label(size)))", "CachingHTTPClient revalidated, 304 (\(label(size)))", "CachingHTTPClient reload, 200 stored (\(label(size)))"]
        }
        let hitOps = 50_000 / scale
        let fetchOps = 2_000 / scale
        var results: [String: [Double]] = [:]
        var connections: [String: Int] = [:]
        var requests: [String: Int] = [:]
        for round in 0..<rounds {
            for offset in 0..<names.count {
                let name = names[(round + offset) % names.count]
                var checksum = 0
                let ops: Int
                let acceptedBefore = origin.connectionsAccepted
                let start = monotonicNanoseconds()
                if name.hasPrefix("MemoryCache") {
                    ops = hitOps
                    let key = "GET \(base)/fresh/1024"
                    for _ in 0..<ops { checksum &+= plain.value(forKey: key)?.count ?? 0 }
                } else if name.hasPrefix("CachingHTTPClient fresh") {
                    ops = hitOps
                    for _ in 0..<ops { checksum &+= try await bytes(try await client.execute(freshRequest, timeout: timeout).body) }
                } else {
                    ops = fetchOps
                    let size = sizes.first { name.hasSuffix("(\(label($0)))") }!
                    let request = HTTPClientRequest(url: "\(base)/validate/\(size)")
                    if name.hasPrefix("HTTPClient") {
                        for _ in 0..<ops { checksum &+= try await bytes(try await httpClient.execute(request, timeout: timeout).body) }
                    } else {
                        let policy: HTTPCachePolicy = name.contains("reload") ? .reload : .useProtocolPolicy
                        for _ in 0..<ops {
                            checksum &+= try await bytes(try await client.execute(request, policy: policy, timeout: timeout).body)
                        }
                    }
                }
                let elapsed = Double(monotonicNanoseconds() - start)
                connections[name, default: 0] += origin.connectionsAccepted - acceptedBefore
                requests[name, default: 0] += ops
                blackHole(checksum)
                results[name, default: []].append(elapsed / Double(ops))
            }
        }
        try await httpClient.shutdown()
        try await origin.stop()

        print("CachingHTTPClient against an origin on 127.0.0.1: \(rounds) rounds, interleaved; µs per request, medians (min … max)")
        let floor = median(results[names[0]]!)
        for name in names {
            let values = results[name]!
            let mid = median(values)
            var note = ""
            if name.hasPrefix("CachingHTTPClient fresh") {
                note = "   +\(fixed((mid - floor) / 1000, 1)) µs over the MemoryCache lookup"
            }
            if !name.hasPrefix("MemoryCache") {
                note += "   \(fixed(Double(connections[name]!) / Double(requests[name]!), 3)) new origin connections per request"
            }
            if name.hasPrefix("CachingHTTPClient"), !name.contains("fresh") {
                let full = median(results[names.first { $0.hasPrefix("HTTPClient") && $0.hasSuffix(name.suffix(from: name.lastIndex(of: "(")!)) }!]!)
                note = "   \(fixed(mid / full, 2))× the full fetch" + note
            }
            let padded = name + String(repeating: " ", count: max(0, 44 - name.count))
            print("\(padded) \(fixed(mid / 1000, 2)) µs  (\(fixed(values.min()! / 1000, 2)) … \(fixed(values.max()! / 1000, 2)))\(note)")
        }
    }

    static func monotonicNanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Keeps `value` alive, so the optimiser cannot drop the loop that computed it.
    @inline(never) static func blackHole(_ value: Int) {
        if value == Int.min { print("") }
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    static func label(_ size: Int) -> String { "\(size / 1024) KB" }

    /// `value` with `digits` decimals, without Foundation.
    static func fixed(_ value: Double, _ digits: Int) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = Int((value * scale).rounded())
        let whole = scaled / Int(scale), fraction = abs(scaled % Int(scale))
        guard digits > 0 else { return String(whole) }
        let text = String(fraction)
        return "\(whole).\(String(repeating: "0", count: digits - text.count))\(text)"
    }
}
#else
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Built without the `AsyncHTTPClient` package trait: says so and fails instead of serving.
@main
enum ClientBenchUnavailable {
    static func main() {
        print("stash-http-client-bench was built without the Stash package's AsyncHTTPClient trait")
        exit(1)
    }
}
#endif  // AsyncHTTPClient
