#if Redis
import Foundation
import Stash
import StashRedis

/// `stash-redis-bench cache-invalidation PORT SAMPLES`: what a `Cache` user sees of an
/// invalidation. Two caches (memory, disk in a temporary directory, Redis), one writing, the other
/// holding the old value in memory and on disk; from the start of the writer's `setValue` until
/// the reader's synchronous read (memory, then disk: never the network) stops returning the old
/// value. Prints the percentiles of that, of the writer's own call, and of the time from the
/// writer's return until the reader stopped serving the old value.
///
/// A function of its own, not top-level code: there the synchronous overloads of `Cache`'s
/// `setValue` and `value(forKey:)` were chosen, which never wait for Redis.
func runCacheInvalidationBench(configuration: RedisConfiguration, samples: Int) async throws {
    let writerClient = RedisClient(configuration: configuration)
    let readerClient = RedisClient(configuration: configuration)
    let base = FileManager.default.temporaryDirectory.appendingPathComponent("stash-bench-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: base) }
    func makeCache(_ name: String, _ client: RedisClient) throws -> Cache<Data> {
        try Cache<Data>(memory: MemoryCache(), disk: DiskCache(directory: "\(base)/\(name)", codec: .data),
                        remote: RedisCacheTier(executor: client, codec: .data, configuration: .init(keyPrefix: "clat:")))
    }
    let writer = try makeCache("writer", writerClient), reader = try makeCache("reader", readerClient)
    await writer.waitUntilReceivingInvalidations()
    await reader.waitUntilReceivingInvalidations()
    let old = Data(repeating: 0x6F, count: 100), new = Data(repeating: 0x6E, count: 100)
    var total: [UInt64] = [], call: [UInt64] = [], afterReturn: [UInt64] = []
    for index in 0..<(samples + 100) {
        let key = "k\(index)"
        // The old value, written by the writer and read by the reader through Redis: in both caches.
        try await writer.setValue(old, forKey: key)
        while try await reader.value(forKey: key) != old { await Task.yield() }
        let sent = now()
        try await writer.setValue(new, forKey: key)
        let returned = now()
        var polls = 0
        while try reader.synchronousValue(forKey: key) == old {
            polls += 1
            if polls % 64 == 0 { await Task.yield() }
        }
        let stopped = now()
        if index >= 100 {
            total.append(stopped - sent)
            call.append(returned - sent)
            afterReturn.append(stopped > returned ? stopped - returned : 0)
        }
    }
    func percentiles(_ values: [UInt64]) -> String {
        let sorted = values.sorted()
        let p50 = Double(sorted[sorted.count / 2]) / 1000, p99 = Double(sorted[sorted.count * 99 / 100]) / 1000
        return "p50_us=\(p50) p99_us=\(p99)"
    }
    print("total \(percentiles(total)) | writer_call \(percentiles(call)) | after_return \(percentiles(afterReturn))")
    await writerClient.close()
    await readerClient.close()
}

extension Cache {
    /// The synchronous `value(forKey:)` (memory, then disk), called by that name from async code.
    func synchronousValue(forKey key: String) throws -> Value? {
        try value(forKey: key)
    }
}
#endif  // Redis
