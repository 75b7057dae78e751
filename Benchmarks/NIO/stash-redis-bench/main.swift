#if Redis
// The client side of scripts/redis/bench.sh: GET/SET of 100-byte values through
// StashRedis against a running server, at a fixed concurrency, with or without
// pipelining; and the invalidation latency between two tier instances.
//
//   stash-redis-bench throughput PORT MODE(get|set) LAYER(client|tier) CLIENTS PIPELINE REQUESTS
//   stash-redis-bench invalidation PORT SAMPLES
//   stash-redis-bench cache-invalidation PORT SAMPLES
//   stash-redis-bench hung PORT PID PAUSE_MS ROUNDS   (HungRedisBench.swift; freezes the server PID)
//   stash-redis-bench memory-hit PORT ROUNDS
//   stash-redis-bench cache-batch PORT KEYS ROUNDS   (CacheBatchBench.swift)
//   stash-redis-bench decode MEGABYTES… [--rounds N] [--read BYTES]   (no server: DecodeBench.swift)
//
// Prints one line: `rps=<requests per second>`, `p50_us=<..> p99_us=<..>` (for cache-invalidation,
// also the writer's own call and the time from its return), or (memory-hit)
// the median nanoseconds per hit of a plain MemoryCache, of `Cache` with a Redis tier
// (its async and its synchronous `value(forKey:)`) hitting its memory tier, and the ratios.
import BenchSupport
import Foundation
import NIOCore
import Stash
import StashRedis

func now() -> UInt64 { monotonicNanoseconds() }

/// Nanoseconds per lookup of `lookUp` over `keys`, `lookups` times; the bytes found keep the work
/// observable. Nonisolated, with a `@Sendable` (so nonisolated) closure: called from the main
/// actor's top-level code, each `await` would otherwise hop between the main actor and the global
/// executor, two thread switches per lookup.
nonisolated func timeLookups(
    _ lookups: Int, _ keys: [String], valueSize: Int, _ lookUp: @Sendable (String) async throws -> Data?
) async rethrows -> Double {
    var found = 0
    let start = now()
    for index in 0..<lookups {
        found &+= try await lookUp(keys[index % keys.count])?.count ?? 0
    }
    let elapsed = now() - start
    precondition(found == lookups * valueSize, "every lookup is a hit")
    return Double(elapsed) / Double(lookups)
}

let arguments = CommandLine.arguments
if arguments.count >= 2, arguments[1] == "decode" {
    try runDecodeBench(Array(arguments.dropFirst(2)))
    exit(0)
}
guard arguments.count >= 3, let port = Int(arguments[2]) else {
    print("usage: stash-redis-bench throughput PORT get|set|set-no-ttl client|tier CLIENTS PIPELINE REQUESTS | invalidation PORT SAMPLES | cache-invalidation PORT SAMPLES | hung PORT PID PAUSE_MS ROUNDS | memory-hit PORT ROUNDS | cache-batch PORT KEYS ROUNDS | decode MEGABYTES… [--rounds N] [--read BYTES]")
    exit(2)
}

var configuration = RedisConfiguration(host: "127.0.0.1", port: port)
configuration.poolSize = 8
configuration.commandTimeout = .seconds(10)

switch arguments[1] {
case "throughput":
    let mode = arguments[3], layer = arguments[4]
    let clients = Int(arguments[5])!, pipeline = Int(arguments[6])!, requests = Int(arguments[7])!
    let client = RedisClient(configuration: configuration)
    let tier = RedisCacheTier(executor: client, codec: .data,
                              configuration: { var c = RedisCacheTier<Data>.Configuration(keyPrefix: "bench:"); c.publishesInvalidations = false; return c }())
    let value = Data(repeating: 0x61, count: 100)
    let buffer = ByteBuffer(bytes: Array(repeating: 0x61, count: 100))
    let keys = (0..<10_000).map { "key:\($0)" }
    // "set" stores with a time to live (the tier sends `SET … PX`); "set-no-ttl" without (a plain `SET`).
    let ttl: Duration? = mode == "set-no-ttl" ? nil : .seconds(3600)
    // Warm up, and make every GET a hit.
    for key in keys {
        if layer == "tier" { try await tier.setValue(value, forKey: key, ttl: .seconds(3600)) }
        else { try await client.set(key, to: buffer) }
    }
    let perClient = requests / clients
    let start = now()
    try await withThrowingTaskGroup(of: Void.self) { group in
        for c in 0..<clients {
            group.addTask {
                var i = c
                var done = 0
                while done < perClient {
                    let batch = min(pipeline, perClient - done)
                    if layer == "client" {
                        var commands: [RedisCommand] = []
                        commands.reserveCapacity(batch)
                        for _ in 0..<batch {
                            let key = keys[i % keys.count]
                            i += 7
                            commands.append(mode == "get" ? RedisCommand("GET", key: key, [.string(key)])
                                : RedisCommand("SET", key: key, [.string(key), .bytes(buffer)]))
                        }
                        if batch == 1 { _ = try await client.send(commands[0]) }
                        else { for result in await client.send(pipeline: commands) { _ = try result.get() } }
                    } else {
                        var batchKeys: [String] = []
                        for _ in 0..<batch {
                            batchKeys.append(keys[i % keys.count])
                            i += 7
                        }
                        if batch == 1 {
                            if mode == "get" { _ = try await tier.entry(forKey: batchKeys[0]) }
                            else { try await tier.setValue(value, forKey: batchKeys[0], ttl: ttl) }
                        } else if mode == "get" {
                            _ = try await tier.entries(forKeys: batchKeys)
                        } else {
                            try await tier.setValues(batchKeys.map { ($0, value) }, ttl: ttl)
                        }
                    }
                    done += batch
                }
            }
        }
        try await group.waitForAll()
    }
    let seconds = Double(now() - start) / 1e9
    print("rps=\(Int(Double(perClient * clients) / seconds))")
    await client.close()

case "invalidation":
    let samples = Int(arguments[3])!
    let writerClient = RedisClient(configuration: configuration)
    let readerClient = RedisClient(configuration: configuration)
    let writer = RedisCacheTier(executor: writerClient, codec: .data, configuration: .init(keyPrefix: "lat:"))
    let reader = RedisCacheTier(executor: readerClient, codec: .data, configuration: .init(keyPrefix: "lat:"))
    let arrivals = LockedValue<[String: UInt64]>([:])
    let signal = AsyncStream<Void>.makeStream()
    try await reader.startReceivingInvalidations { invalidation in
        if case .key(let key) = invalidation {
            let at = now()
            arrivals.withLock { $0[key] = at }
            signal.continuation.yield()
        }
    }
    var latencies: [UInt64] = []
    var iterator = signal.stream.makeAsyncIterator()
    let value = Data(repeating: 0x62, count: 100)
    for index in 0..<(samples + 100) {
        let key = "k\(index)"
        let sent = now()
        try await writer.setValue(value, forKey: key, ttl: .seconds(60))
        while arrivals.withLock({ $0[key] }) == nil { _ = await iterator.next() }
        if index >= 100 { latencies.append(arrivals.withLock { $0[key]! } - sent) }
    }
    latencies.sort()
    let p50 = latencies[latencies.count / 2], p99 = latencies[latencies.count * 99 / 100]
    print("p50_us=\(Double(p50) / 1000) p99_us=\(Double(p99) / 1000)")
    await reader.close()
    await writerClient.close()
    await readerClient.close()

case "cache-invalidation":
    try await runCacheInvalidationBench(configuration: configuration, samples: Int(arguments[3])!)

case "hung":
    try await runHungRedisBench(configuration: configuration, pid: Int32(arguments[3])!,
                                pause: .milliseconds(Int(arguments[4])!), rounds: Int(arguments[5])!)

case "cache-batch":
    try await runCacheBatchBench(configuration: configuration, keyCount: Int(arguments[3])!, rounds: Int(arguments[4])!)

case "memory-hit":
    // A read through `Cache` (memory + Redis) that hits memory, beside a plain MemoryCache hit:
    // the same 1,000 keys, the same lookups, interleaved in every round (order rotated), medians.
    let rounds = Int(arguments[3])!
    let lookups = 1_000_000
    let client = RedisClient(configuration: configuration)
    let tier = RedisCacheTier(executor: client, codec: .data, configuration: .init(keyPrefix: "hit:"))
    let cache = try Cache<Data>(memory: MemoryCache(), disk: nil, remote: tier)
    let plain = MemoryCache<String, Data>()
    let keys = (0..<1_000).map { "key:\($0)" }
    let value = Data(repeating: 0x63, count: 100)
    /// Writes every key to both caches (through Redis for `cache`).
    func fill() async throws {
        for key in keys {
            try await cache.setValue(value, forKey: key)
            plain.setValue(value, forKey: key)
        }
    }
    try await fill()
    // A synchronous closure, so that the synchronous overload is the one called.
    let syncRead: @Sendable (String) throws -> Data? = { try cache.value(forKey: $0) }
    let names = ["MemoryCache", "Cache async", "Cache sync"]
    var samples: [[Double]] = Array(repeating: [], count: names.count)
    for round in 0..<(rounds + 1) {
        for offset in 0..<names.count {
            let which = (round + offset) % names.count
            let ns: Double
            switch which {
            case 0: ns = await timeLookups(lookups, keys, valueSize: value.count) { plain.value(forKey: $0) }
            case 1: ns = try await timeLookups(lookups, keys, valueSize: value.count) { try await cache.value(forKey: $0) }
            default: ns = try await timeLookups(lookups, keys, valueSize: value.count) { try syncRead($0) }
            }
            if round > 0 { samples[which].append(ns) }  // round 0 warms up
        }
    }
    let medians = samples.map(median)
    func format(_ x: Double) -> String { String(format: "%.1f", x) }
    print("memorycache_ns=\(format(medians[0])) cache_async_ns=\(format(medians[1])) cache_sync_ns=\(format(medians[2]))"
          + " async_ratio=\(String(format: "%.2f", medians[1] / medians[0])) sync_ratio=\(String(format: "%.2f", medians[2] / medians[0]))")
    await tier.close()
    await client.close()

default:
    print("unknown command \(arguments[1])")
    exit(2)
}
#endif  // Redis
