// The client side of scripts/redis/bench.sh: GET/SET of 100-byte values through
// StashRedis against a running server, at a fixed concurrency, with or without
// pipelining; and the invalidation latency between two tier instances.
//
//   stash-redis-bench throughput PORT MODE(get|set) LAYER(client|tier) CLIENTS PIPELINE REQUESTS
//   stash-redis-bench invalidation PORT SAMPLES
//
// Prints one line: `rps=<requests per second>` or `p50_us=<..> p99_us=<..>`.
import Foundation
import NIOCore
import Stash
import StashRedis

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

let arguments = CommandLine.arguments
guard arguments.count >= 3, let port = Int(arguments[2]) else {
    print("usage: stash-redis-bench throughput PORT get|set client|tier CLIENTS PIPELINE REQUESTS | invalidation PORT SAMPLES")
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
    // Warm up, and make every GET a hit.
    for key in keys {
        if layer == "tier" { try await tier.setValue(value, forKey: key, timeToLive: .seconds(3600)) }
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
                            else { try await tier.setValue(value, forKey: batchKeys[0], timeToLive: .seconds(3600)) }
                        } else if mode == "get" {
                            _ = try await tier.entries(forKeys: batchKeys)
                        } else {
                            try await tier.setValues(batchKeys.map { ($0, value) }, timeToLive: .seconds(3600))
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
        try await writer.setValue(value, forKey: key, timeToLive: .seconds(60))
        while arrivals.withLock({ $0[key] }) == nil { _ = await iterator.next() }
        if index >= 100 { latencies.append(arrivals.withLock { $0[key]! } - sent) }
    }
    latencies.sort()
    let p50 = latencies[latencies.count / 2], p99 = latencies[latencies.count * 99 / 100]
    print("p50_us=\(Double(p50) / 1000) p99_us=\(Double(p99) / 1000)")
    await reader.close()
    await writerClient.close()
    await readerClient.close()

default:
    print("unknown command \(arguments[1])")
    exit(2)
}
