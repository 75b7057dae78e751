#if Redis
import Foundation
import NIOCore
import StashTestSupport
import Testing
@testable import Stash
@testable import StashRedis

extension RedisSuites {
    /// A primary of a real local cluster killed outright (SIGKILL) under a burst of
    /// reads and writes: the cluster elects its replica on its own (after
    /// `cluster-node-timeout`, one second here), the client rereads the slot map,
    /// and a `Cache` on the cluster keeps serving and writing, keeps every write,
    /// and leaves no copy older than its last write in the cluster. A cluster of its own, since the kill leaves it
    /// with a primary fewer replicas.
    @Suite(.requiresRedisServer, .timeLimit(.minutes(5))) struct RedisClusterFailoverTests {
        @Test func aKilledPrimaryFailsOverToItsReplica() async throws {
            try RedisRequirement.requireServer()
            let cluster = try RedisClusterProcesses()
            defer { cluster.stop() }
            var configuration = RedisConfiguration()
            configuration.commandTimeout = .milliseconds(500)
            configuration.connectTimeout = .milliseconds(500)
            configuration.initialReconnectDelay = .milliseconds(10)
            configuration.maximumReconnectDelay = .milliseconds(100)
            let client = RedisClusterClient(seeds: cluster.servers.map { ("127.0.0.1", $0.port) }, configuration: configuration,
                                            maximumRedirections: 16)
            let candidates = cluster.servers.map { RedisConfiguration(host: "127.0.0.1", port: $0.port) }
            let tier = RedisCacheTier(executor: client, codec: .string, configuration: .init(keyPrefix: "fo:"), subscribeOn: candidates)
            let directory = try TemporaryDirectory(prefix: "stash-redis-cache")
            let cache = try Cache<String>(directory: directory.path, codec: .string, remote: tier)
            await cache.waitUntilReceivingInvalidations()

            let victimKey = "fo:key0"
            let slot = RedisKeySlot(key: victimKey).rawValue
            let oldPrimary = try cluster.primaryPort(forSlot: slot, askingPort: cluster.servers[0].port)
            let replica = try cluster.replicaPort(ofPrimaryPort: oldPrimary)
            try cluster.waitUntil("the replica is in sync") {
                try RedisServerProcess.runCLI(["-p", "\(replica)", "INFO", "replication"]).contains("master_link_status:up")
            }

            // Keys on every primary, replicated before the kill.
            let keys = (0..<60).map { "key\($0)" }
            for key in keys { try await cache.setValue("before:\(key)", forKey: key, ttl: .seconds(300)) }
            try cluster.waitUntil("the replica has every write") {
                try RedisServerProcess.runCLI(["-p", "\(oldPrimary)", "WAIT", "1", "100"]).trimmingCharacters(in: .whitespacesAndNewlines) == "1"
            }

            // Under load: four workers write and read their own and each other's keys throughout.
            let burst = Burst(cache: cache)
            let running = Task { await burst.run() }
            defer { burst.stop.withLock { $0 = true } }  // also when a wait below runs out
            try await burst.progress.wait(reaching: 200)

            // When the primary is killed outright, the cache keeps serving its local tiers.
            cluster.server(port: oldPrimary)!.kill()
            let atKill = burst.progress.count
            try await burst.progress.wait(reaching: atKill + 300)
            let local = try await cache.value(forKey: "key0")
            #expect(local == "before:key0")
            try await cache.setValue("during", forKey: "key0", ttl: .seconds(300))

            // The surviving primaries mark the dead one failed and its replica wins the
            // election: no command asks for it. (Seconds, however loaded the machine:
            // waited for with a deadline.)
            try cluster.waitUntil("the replica is promoted") {
                try RedisServerProcess.runCLI(["-p", "\(replica)", "ROLE"]).hasPrefix("master")
            }
            try cluster.waitUntil("every live node agrees on the new primary") {
                try cluster.servers.filter { $0.port != oldPrimary }.allSatisfy {
                    try cluster.primaryPort(forSlot: slot, askingPort: $0.port) == replica
                }
            }

            // Then the client finds the new primary by rereading the slot map: the
            // replicated values are there, and writes reach the new primary.
            let fresh = try Cache<String>(memory: nil, disk: nil, remote: RedisCacheTier(executor: client, codec: .string,
                                                                                             configuration: .init(keyPrefix: "fo:")))
            // The write made while the slot had no primary is kept, and once a call reaches the
            // cluster again, the promoted replica's older copy is removed (issue #28: the rules of a
            // restart hold for a fail-over).
            let kept = try await cache.value(forKey: "key0")
            #expect(kept == "during", "the instance reads its own write made during the fail-over")
            let atFailover = burst.progress.count
            try await burst.progress.wait(reaching: atFailover + 300)
            burst.writing.withLock { $0 = false }
            burst.stop.withLock { $0 = true }
            await running.value
            try await cache.waitUntilRepaired()
            let shared = try await fresh.value(forKey: "key0")
            #expect(shared == nil, "the cluster holds no copy older than the instance's write")
            #expect(burst.failures.withLock { $0 } == [], "no call failed and no caller saw a value older than one it had seen")
            try await burst.checkEveryLastWrite(in: tier)
            for key in keys.dropFirst() {
                let read = try await fresh.value(forKey: key)
                #expect(read == "before:\(key)", "\(key)")
            }
            try await cache.setValue("after", forKey: "key0", ttl: .seconds(300))
            let afterFailover = try await fresh.value(forKey: "key0")
            #expect(afterFailover == "after")
            let ports = try await client.primaryClients().map(\.configuration.port)
            #expect(ports.contains(replica), "the refreshed map names the new primary: \(ports)")
            #expect(!ports.contains(oldPrimary))
            await tier.close()
            await client.close()
        }
    }
}
#endif  // Redis
