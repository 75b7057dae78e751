// stash-http-bench: the HTTP cache engine's hit, miss and revalidation, side by side with a
// plain MemoryCache lookup of the same 1 KB entry, in one run. The origin is an in-process
// closure that answers at once, so the figures are the engine's own cost.
//
// usage: stash-http-bench [--rounds N] [--quick] [--directory DIR] [--contention]
// --contention runs the fresh hit from 1, 2 and 4 tasks at once instead (HTTPContention.swift).
import BenchSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HTTPTypes
import Stash
import StashBenchKit
import StashHTTP

@main
struct HTTPBench {
    static func main() async throws {
        try await run()
    }

    /// Nonisolated, so the timed loops run on the cooperative pool without a main-actor hop per call.
    nonisolated static func run() async throws {
        let arguments = CommandLine.arguments
        let quick = arguments.contains("--quick")
        let rounds = value(after: "--rounds", in: arguments).flatMap { Int($0) } ?? (quick ? 5 : 11)
        if arguments.contains("--contention") {
            try await HTTPContention.run(rounds: rounds, quick: quick)
            return
        }
        let directory = value(after: "--directory", in: arguments) ?? "/tmp/stash-http-bench-\(getpid())"
        let scale = quick ? 10 : 1
        let body = [UInt8](repeating: 0x61, count: 1024)
        let clock = ManualClock(start: 1_700_000_000 * 1_000_000_000)
        let dateText = "Tue, 14 Nov 2023 22:13:20 GMT"

        func request(_ path: String) -> HTTPRequest {
            HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:8000", path: path)
        }
        var freshFields = HTTPFields()
        freshFields[.cacheControl] = "max-age=3600"
        freshFields[.date] = dateText
        freshFields[.contentType] = "text/plain"
        freshFields[.contentLength] = "1024"
        var validatedFields = freshFields
        validatedFields[.cacheControl] = "max-age=0"
        validatedFields[.eTag] = "\"v1\""
        var notModifiedFields = HTTPFields()
        notModifiedFields[.cacheControl] = "max-age=0"
        notModifiedFields[.eTag] = "\"v1\""
        notModifiedFields[.date] = dateText
        let fresh = freshFields, validated = validatedFields, notModified = notModifiedFields

        // The baseline: the same entry in a plain MemoryCache.
        let plain = MemoryCache<String, [UInt8]>(configuration: .init(autoTrimInterval: nil))
        plain.setValue(body, forKey: "GET http://127.0.0.1:8000/hit")

        var configuration = HTTPCache.Configuration(mode: .private)
        configuration.clock = clock
        configuration.memoryCostLimit = 512 << 20
        configuration.memoryCountLimit = 1_000_000
        let cache = try HTTPCache(configuration: configuration)
        let freshOrigin: @Sendable (HTTPRequest, HTTPCacheBody?) async throws -> (HTTPResponse, HTTPCacheBody) = { _, _ in
            (HTTPResponse(status: .ok, headerFields: fresh), HTTPCacheBody(bytes: body))
        }
        let validatingOrigin: @Sendable (HTTPRequest, HTTPCacheBody?) async throws -> (HTTPResponse, HTTPCacheBody) = { request, _ in
            if request.headerFields[.ifNoneMatch] != nil { return (HTTPResponse(status: .notModified, headerFields: notModified), HTTPCacheBody()) }
            return (HTTPResponse(status: .ok, headerFields: validated), HTTPCacheBody(bytes: body))
        }
        _ = try await cache.response(for: request("/hit"), origin: freshOrigin)
        _ = try await cache.response(for: request("/revalidate"), origin: validatingOrigin)

        // A disk hit: a memory tier of one entry, two URLs read in turn.
        var diskConfiguration = HTTPCache.Configuration(mode: .private, directory: directory)
        diskConfiguration.clock = clock
        diskConfiguration.memoryCountLimit = 1
        let diskCache = try HTTPCache(configuration: diskConfiguration)
        _ = try await diskCache.response(for: request("/a"), origin: freshOrigin)
        _ = try await diskCache.response(for: request("/b"), origin: freshOrigin)

        let hitOps = 100_000 / scale
        let slowOps = 20_000 / scale
        var missCounter = 0
        var results: [String: [Double]] = [:]
        // `--only NAME`: one operation alone, for a profiler.
        let names = ["MemoryCache lookup", "HTTPCache fresh hit (memory)", "HTTPCache disk hit", "HTTPCache miss (stored)", "HTTPCache revalidation (304)"]
            .filter { name in value(after: "--only", in: arguments).map { name.contains($0) } ?? true }

        for round in 0..<rounds {
            for offset in 0..<names.count {
                let name = names[(round + offset) % names.count]
                var checksum = 0
                let ops: Int
                let start = monotonicNanoseconds()
                switch name {
                case "MemoryCache lookup":
                    ops = hitOps
                    for _ in 0..<ops { checksum &+= plain.value(forKey: "GET http://127.0.0.1:8000/hit")?.count ?? 0 }
                case "HTTPCache fresh hit (memory)":
                    ops = hitOps
                    let hit = request("/hit")
                    for _ in 0..<ops {
                        checksum &+= try await cache.response(for: hit, origin: freshOrigin).body.bufferedBytes?.count ?? 0
                    }
                case "HTTPCache disk hit":
                    ops = slowOps / 4
                    let a = request("/a"), b = request("/b")
                    for index in 0..<ops {
                        checksum &+= try await diskCache.response(for: index % 2 == 0 ? a : b, origin: freshOrigin).body.bufferedBytes?.count ?? 0
                    }
                case "HTTPCache miss (stored)":
                    ops = slowOps
                    for _ in 0..<ops {
                        missCounter += 1
                        checksum &+= try await cache.response(for: request("/miss/\(missCounter)"), origin: freshOrigin).body.bufferedBytes?.count ?? 0
                    }
                default:
                    ops = slowOps
                    let revalidate = request("/revalidate")
                    for _ in 0..<ops {
                        checksum &+= try await cache.response(for: revalidate, origin: validatingOrigin).body.bufferedBytes?.count ?? 0
                    }
                }
                let elapsed = Double(monotonicNanoseconds() - start)
                blackHole(checksum)
                results[name, default: []].append(elapsed / Double(ops))
            }
        }
        await diskCache.close()
        _ = system("rm -rf '\(directory)'")

        print("stash-http-bench: \(rounds) rounds, interleaved; ns per operation, medians (min … max)")
        let baseline = results["MemoryCache lookup"].map(median) ?? 0
        for name in names {
            let values = results[name]!
            let mid = median(values)
            let over = name == "MemoryCache lookup" ? "" : "   +\(Int((mid - baseline).rounded())) ns over the MemoryCache lookup"
            let label = name + String(repeating: " ", count: max(0, 32 - name.count))
            print("\(label) \(Int(mid.rounded())) ns  (\(Int(values.min()!.rounded())) … \(Int(values.max()!.rounded())))\(over)")
        }
    }

    static func value(after flag: String, in arguments: [String]) -> String? {
        guard let index = arguments.firstIndex(of: flag), index + 1 < arguments.count else { return nil }
        return arguments[index + 1]
    }
}
