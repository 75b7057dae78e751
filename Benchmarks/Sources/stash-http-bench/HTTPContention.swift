// stash-http-bench --contention: HTTPCache fresh hits from 1, 2 and 4 tasks at once (issue #26),
// beside the same reads of a plain MemoryCache, every task count and both caches interleaved in
// each round. The tasks run on Swift's cooperative pool, one thread per core.
import BenchSupport
import HTTPTypes
import Stash
import StashBenchKit
import StashHTTP

enum HTTPContention {
    static let taskCounts = [1, 2, 4]
    static let urlCount = 1_000

    /// Runs the part and prints its table: thousand reads per second (all tasks' reads / wall time
    /// from the first task's start to the last one's end), median of `rounds`, and ÷ 1 task.
    static func run(rounds: Int, quick: Bool) async throws {
        let scale = quick ? 10 : 1
        let body = [UInt8](repeating: 0x61, count: 1024)
        var fields = HTTPFields()
        fields[.cacheControl] = "max-age=3600"
        fields[.date] = "Tue, 14 Nov 2023 22:13:20 GMT"
        fields[.contentType] = "text/plain"
        fields[.contentLength] = "1024"
        let fresh = fields
        let origin: @Sendable (HTTPRequest, HTTPCacheBody?) async throws -> (HTTPResponse, HTTPCacheBody) = { _, _ in
            (HTTPResponse(status: .ok, headerFields: fresh), HTTPCacheBody(bytes: body))
        }
        let requests = (0..<urlCount).map {
            HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:8000", path: "/c/\($0)")
        }

        var configuration = HTTPCache.Configuration(mode: .private)
        configuration.clock = ManualClock(start: 1_700_000_000 * 1_000_000_000)
        configuration.memoryCostLimit = 512 << 20
        configuration.memoryCountLimit = 1_000_000
        let cache = try HTTPCache(configuration: configuration)
        let plain = MemoryCache<String, [UInt8]>(configuration: .init(autoTrimInterval: nil))
        for request in requests {
            _ = try await cache.response(for: request, origin: origin)
            plain.setValue(body, forKey: "GET http://127.0.0.1:8000\(request.path!)")
        }
        let plainKeys = requests.map { "GET http://127.0.0.1:8000\($0.path!)" }

        let contenders: [(name: String, readsPerTask: Int, read: @Sendable (Int) async throws -> Int)] = [
            ("HTTPCache fresh hit (memory)", 50_000 / scale, { index in
                try await cache.response(for: requests[index], origin: origin).body.bufferedBytes?.count ?? 0
            }),
            ("MemoryCache lookup (the floor)", 2_000_000 / scale, { index in
                plain.value(forKey: plainKeys[index])?.count ?? 0
            }),
        ]
        var results: [String: [Int: [Double]]] = [:]
        for round in 0..<rounds {
            for offset in 0..<(contenders.count * taskCounts.count) {
                let pick = (round + offset) % (contenders.count * taskCounts.count)
                let contender = contenders[pick % contenders.count]
                let tasks = taskCounts[pick / contenders.count]
                let start = monotonicNanoseconds()
                let checksum = try await withThrowingTaskGroup(of: Int.self) { group in
                    for task in 0..<tasks {
                        group.addTask {
                            var generator = SeededGenerator(seed: 0x4777_0000 &+ UInt64(task) &+ UInt64(round) << 8)
                            var sum = 0
                            for _ in 0..<contender.readsPerTask {
                                sum &+= try await contender.read(Int.random(in: 0..<urlCount, using: &generator))
                            }
                            return sum
                        }
                    }
                    return try await group.reduce(0, &+)
                }
                let seconds = Double(monotonicNanoseconds() - start) / 1e9
                blackHole(checksum)
                results[contender.name, default: [:]][tasks, default: []]
                    .append(Double(tasks * contender.readsPerTask) / seconds / 1_000)
            }
        }

        print("stash-http-bench --contention: \(rounds) rounds, interleaved; \(urlCount) URLs, 1 KB bodies, uniform reads;")
        print("thousand reads/s (all tasks' reads / wall time), median (min … max), and ÷ 1 task")
        for contender in contenders {
            let one = median(results[contender.name]![1]!)
            for tasks in taskCounts {
                let values = results[contender.name]![tasks]!
                let mid = median(values)
                let label = contender.name + String(repeating: " ", count: max(0, 32 - contender.name.count))
                print("\(label) \(tasks) task\(tasks == 1 ? " " : "s") \(format(mid)) (\(format(values.min()!)) … \(format(values.max()!)))  \(format2(mid / one))×")
            }
        }
    }

    private static func format(_ value: Double) -> String { String(Int(value.rounded())) }
    /// Two decimals.
    private static func format2(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        let fraction = String(hundredths % 100)
        return "\(hundredths / 100).\(fraction.count == 1 ? "0" + fraction : fraction)"
    }
}
