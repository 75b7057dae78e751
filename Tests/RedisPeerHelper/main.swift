#if Redis
// Test helper, not a product: a second process with its own `Cache` (memory,
// disk and Redis), driven line by line on stdin by StashRedisTests, so that two
// processes share one redis-server. Answers each command with one line.
//
//   stash-redis-peer PORT DIRECTORY PREFIX     prints `ready` once subscribed
//   set KEY VALUE        → ok                  (async setValue, 60 s TTL)
//   get KEY              → value VALUE | miss  (async value(forKey:))
//   remove KEY           → ok
//   local KEY            → local yes | local no (memory or disk holds KEY)
//   await-dropped KEY    → dropped | timeout   (until neither local tier holds KEY, at most 10 s)
//   load KEY VALUE MS    → value V loads N     (get-or-load with a fleet lock of MS milliseconds;
//                                               the loader returns VALUE; N counts this process's loader calls)
//   hold KEY MS          → holding             (a get-or-load whose loader never returns, started in the
//                                               background; answers once the loader runs, holding the fleet lock)
//   quit
import Foundation
import Stash
import StashRedis

func reply(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let arguments = CommandLine.arguments
guard arguments.count == 4, let port = Int(arguments[1]) else {
    FileHandle.standardError.write(Data("usage: stash-redis-peer PORT DIRECTORY PREFIX\n".utf8))
    exit(2)
}
let client = RedisClient(configuration: RedisConfiguration(host: "127.0.0.1", port: port))
let cache = try Cache<String>(directory: arguments[2], codec: .string,
                              remote: RedisCacheTier(executor: client, codec: .string, configuration: .init(keyPrefix: arguments[3])))
await cache.waitUntilReceivingInvalidations()
reply("ready")

/// The loader calls made by `load`, and the loaders that `hold` left hanging.
let loaderCalls = LockedValue(0)
let hanging = LockedValue<[CheckedContinuation<Void, Never>]>([])

struct BadArgument: Error, CustomStringConvertible {
    let description: String
}

func fleetOptions(_ milliseconds: String) throws -> LoadOptions {
    guard let milliseconds = Int(milliseconds) else { throw BadArgument(description: "not milliseconds: \(milliseconds)") }
    return LoadOptions(ttl: .seconds(60), fleetLockTTL: .milliseconds(milliseconds))
}

func heldLocally(_ key: String) async throws -> Bool {
    if cache.memory?.contains(key) == true { return true }
    return try await cache.disk?.contains(key) ?? false
}

/// Runs one command; the async overloads of `Cache`, as a server would call them.
func answer(_ line: String) async throws -> String {
    let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
    switch (parts.first, parts.count) {
    case ("set", 3):
        try await cache.setValue(parts[2], forKey: parts[1], ttl: .seconds(60))
        return "ok"
    case ("get", 2):
        return try await cache.value(forKey: parts[1]).map { "value \($0)" } ?? "miss"
    case ("remove", 2):
        try await cache.removeValue(forKey: parts[1])
        return "ok"
    case ("local", 2):
        return try await heldLocally(parts[1]) ? "local yes" : "local no"
    case ("await-dropped", 2):
        // Another process's invalidation arrives on its own: poll the local tiers' state.
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if try await !heldLocally(parts[1]) { return "dropped" }
            try await Task.sleep(for: .milliseconds(1))
        }
        return "timeout"
    case ("load", 3):
        let more = parts[2].split(separator: " ").map(String.init)
        guard more.count == 2 else { return "error usage: load KEY VALUE MS" }
        let value = try await cache.value(forKey: parts[1], options: try fleetOptions(more[1])) { _ in
            loaderCalls.withLock { $0 += 1 }
            return more[0]
        }
        return "value \(value) loads \(loaderCalls.withLock { $0 })"
    case ("hold", 3):
        let options = try fleetOptions(parts[2])
        await withCheckedContinuation { (started: CheckedContinuation<Void, Never>) in
            Task {
                _ = try? await cache.value(forKey: parts[1], options: options) { _ in
                    started.resume()
                    // Hangs until the test kills this process, holding the fleet lock.
                    await withCheckedContinuation { hung in hanging.withLock { $0.append(hung) } }
                    return "never"
                }
            }
        }
        return "holding"
    default:
        return "error unknown command: \(line)"
    }
}

while let line = readLine(), line != "quit" {
    do {
        reply(try await answer(line))
    } catch {
        reply("error \(error)")
    }
}
await client.close()
#endif  // Redis
