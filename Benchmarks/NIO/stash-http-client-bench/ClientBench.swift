#if AsyncHTTPClient
// stash-http-client-bench: CachingHTTPClient against a real origin on 127.0.0.1 (BenchOrigin),
// one request at a time, interleaved with its baselines in every round, medians. A target of the
// root package, not of Benchmarks/, so that a release build reuses the SwiftNIO and
// AsyncHTTPClient modules scripts/http-bench/run.sh already builds for stash-proxy:
//
//   swift build -c release --scratch-path .build-release --enable-all-traits --product stash-http-client-bench
//   .build-release/release/stash-http-client-bench [--rounds N] [--quick]
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import AsyncHTTPClient
import BenchSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore
import Stash
import StashAsyncHTTPClient
import StashHTTP
import StashURLSession

/// What it measures:
///
/// - A fresh hit of a 1 KB response beside a plain `MemoryCache` lookup of a 1 KB entry: what the
///   adapter costs over the cheapest possible cache (issue #15: at most 50 µs more).
/// - A stored response revalidated with a `304` beside a full `200` fetch of the same body by the
///   bare `HTTPClient`, and beside a `.reload` through the cache (a `200` fetched and stored), for a
///   1 KB and a 100 KB body. Every response body is read whole.
/// - The same for `CachingURLSession` (issue #30: a fresh hit at most 50 µs over the lookup),
///   beside plain `URLSession` with a `URLCache`, as a new user sets it up (on Linux it stores
///   nothing: each of its requests is a full fetch).
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
            let buffer: ByteBuffer = try await body.collect(upTo: 1 << 30)
            return buffer.readableBytes
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

        // URLSession: CachingURLSession, and plain URLSession with its URLCache, as a new user sets it up.
        let cachingSession = CachingURLSession(configuration: .ephemeral, cache: try HTTPCache(configuration: cacheConfiguration))
        let urlCacheConfiguration = URLSessionConfiguration.ephemeral
        urlCacheConfiguration.urlCache = URLCache(memoryCapacity: 512 << 20, diskCapacity: 0, diskPath: nil)
        urlCacheConfiguration.requestCachePolicy = .useProtocolCachePolicy
        let urlCacheSession = URLSession(configuration: urlCacheConfiguration)
        let freshURL = URL(string: "\(base)/fresh/1024")!
        _ = try await cachingSession.data(from: freshURL)
        let sessionHit = try await cachingSession.dataWithOutcome(for: URLRequest(url: freshURL))
        precondition(sessionHit.outcome == .hit && sessionHit.data.count == 1024, "the fresh URL is not a CachingURLSession hit")
        for size in sizes {
            let url = URL(string: "\(base)/validate/\(size)")!
            _ = try await cachingSession.data(from: url)
            let again = try await cachingSession.dataWithOutcome(for: URLRequest(url: url))
            precondition(again.outcome == .revalidated && again.data.count == size, "the validated URL is not revalidated by CachingURLSession")
        }

        /// One timed case: `run` makes one request and returns the bytes it read.
        struct Case {
            let name: String
            let ops: Int
            let run: () async throws -> Int
        }
        let hitOps = 50_000 / scale
        let sessionHitOps = 20_000 / scale
        let fetchOps = 2_000 / scale
        let freshKey = "GET \(base)/fresh/1024"
        var cases = [
            Case(name: "MemoryCache lookup (1 KB)", ops: hitOps) { plain.value(forKey: freshKey)?.count ?? 0 },
            Case(name: "CachingHTTPClient fresh hit (1 KB)", ops: hitOps) {
                try await bytes(try await client.execute(freshRequest, timeout: timeout).body)
            },
            Case(name: "CachingURLSession fresh hit (1 KB)", ops: sessionHitOps) { try await cachingSession.data(from: freshURL).0.count },
            Case(name: "URLSession + URLCache, fresh (1 KB)", ops: fetchOps) { try await urlCacheSession.data(from: freshURL).0.count },
        ]
        for size in sizes {
            let request = HTTPClientRequest(url: "\(base)/validate/\(size)")
            let url = URL(string: "\(base)/validate/\(size)")!
            cases += [
                Case(name: "HTTPClient full fetch, 200 (\(label(size)))", ops: fetchOps) {
                    try await bytes(try await httpClient.execute(request, timeout: timeout).body)
                },
                Case(name: "CachingHTTPClient revalidated, 304 (\(label(size)))", ops: fetchOps) {
                    try await bytes(try await client.execute(request, policy: .useProtocolPolicy, timeout: timeout).body)
                },
                Case(name: "CachingHTTPClient reload, 200 stored (\(label(size)))", ops: fetchOps) {
                    try await bytes(try await client.execute(request, policy: .reload, timeout: timeout).body)
                },
                Case(name: "URLSession full fetch, 200 (\(label(size)))", ops: fetchOps) {
                    try await urlCacheSession.data(for: URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData)).0.count
                },
                Case(name: "CachingURLSession revalidated, 304 (\(label(size)))", ops: fetchOps) {
                    try await cachingSession.data(from: url).0.count
                },
            ]
        }
        var results: [String: [Double]] = [:]
        var connections: [String: Int] = [:]
        var requests: [String: Int] = [:]
        for round in 0..<rounds {
            for offset in 0..<cases.count {
                let timed = cases[(round + offset) % cases.count]
                var checksum = 0
                let acceptedBefore = origin.connectionsAccepted
                let start = monotonicNanoseconds()
                for _ in 0..<timed.ops { checksum &+= try await timed.run() }
                let elapsed = Double(monotonicNanoseconds() - start)
                connections[timed.name, default: 0] += origin.connectionsAccepted - acceptedBefore
                requests[timed.name, default: 0] += timed.ops
                blackHole(checksum)
                results[timed.name, default: []].append(elapsed / Double(timed.ops))
            }
        }
        let names = cases.map(\.name)
        cachingSession.invalidateAndCancel()
        urlCacheSession.invalidateAndCancel()
        try await httpClient.shutdown()
        try await origin.stop()

        print("CachingHTTPClient and CachingURLSession against an origin on 127.0.0.1: \(rounds) rounds, interleaved; µs per request, medians (min … max)")
        let floor = median(results[names[0]]!)
        for name in names {
            let values = results[name]!
            let mid = median(values)
            var note = ""
            if name.contains("fresh hit") {
                note = "   +\(fixed((mid - floor) / 1000, 1)) µs over the MemoryCache lookup"
            }
            if !name.hasPrefix("MemoryCache") {
                note += "   \(fixed(Double(connections[name]!) / Double(requests[name]!), 3)) new origin connections per request"
            }
            if name.hasPrefix("Caching"), !name.contains("fresh") {
                let baseline = name.hasPrefix("CachingURLSession") ? "URLSession full" : "HTTPClient"
                let full = median(results[names.first { $0.hasPrefix(baseline) && $0.hasSuffix(name.suffix(from: name.lastIndex(of: "(")!)) }!]!)
                note = "   \(fixed(mid / full, 2))× the full fetch" + note
            }
            let padded = name + String(repeating: " ", count: max(0, 44 - name.count))
            print("\(padded) \(fixed(mid / 1000, 2)) µs  (\(fixed(values.min()! / 1000, 2)) … \(fixed(values.max()! / 1000, 2)))\(note)")
        }
    }

    /// Keeps `value` alive, so the optimiser cannot drop the loop that computed it.
    @inline(never) static func blackHole(_ value: Int) {
        if value == Int.min { print("") }
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
        print("stash-http-client-bench was built without the Stash package's AsyncHTTPClient trait: swift build -c release --traits AsyncHTTPClient --product stash-http-client-bench")
        exit(1)
    }
}
#endif  // AsyncHTTPClient
