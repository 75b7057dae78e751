#if Redis
import BenchSupport
import Foundation
import Stash
import StashRedis

/// `stash-redis-bench cache-batch PORT KEYS ROUNDS`: storing `KEYS` 100-byte values through a
/// `Cache` with memory, disk and Redis tiers, three ways interleaved in every round (order rotated;
/// round 0 warms up): one `await setValue` per key, one `setValues` for all of them, and a bulk
/// load (`values(forKeys:orLoad:)` of keys no tier holds, whose loader returns them at once),
/// timed until Redis has every value. Prints the median microseconds per key of each and the
/// ratios to the per-key writes.
func runCacheBatchBench(configuration: RedisConfiguration, keyCount: Int, rounds: Int) async throws {
    let client = RedisClient(configuration: configuration)
    let tier = RedisCacheTier(executor: client, codec: .data, configuration: .init(keyPrefix: "batch:"))
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stash-batch-bench-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let cache = try Cache<Data>(directory: directory.path, codec: .data, remote: tier)
    let value = Data(repeating: 0x62, count: 100)
    let names = ["setValue per key", "setValues", "bulk load"]
    var samples: [[Double]] = Array(repeating: [], count: names.count)
    var batch = 0
    for round in 0..<(rounds + 1) {
        for offset in 0..<names.count {
            let which = (round + offset) % names.count
            batch += 1
            // Fresh keys every time: a bulk load only loads what no tier holds.
            let keys = (0..<keyCount).map { "b\(batch):\($0)" }
            let start = monotonicNanoseconds()
            switch which {
            case 0:
                for key in keys { try await cache.setValue(value, forKey: key) }
            case 1:
                try await cache.setValues(Dictionary(uniqueKeysWithValues: keys.map { ($0, value) }))
            default:
                _ = try await cache.values(forKeys: keys) { keys in
                    Dictionary(uniqueKeysWithValues: keys.map { ($0, value) })
                }
                // Its remote write runs in the background: done once Redis has the last key.
                while try await tier.entry(forKey: keys[keys.count - 1]) == nil { await Task.yield() }
            }
            let elapsed = monotonicNanoseconds() - start
            if round > 0 { samples[which].append(Double(elapsed) / 1_000 / Double(keyCount)) }
        }
    }
    let medians = samples.map(median)
    func format(_ x: Double) -> String { String(format: "%.2f", x) }
    print("per_key_us=\(format(medians[0])) set_values_us=\(format(medians[1])) bulk_load_us=\(format(medians[2]))"
          + " set_values_ratio=\(format(medians[1] / medians[0])) bulk_load_ratio=\(format(medians[2] / medians[0]))")
    await cache.close()
    await tier.close()
    await client.close()
}
#endif  // Redis
