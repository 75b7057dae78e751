#if Redis
import NIOCore
import StashTestSupport
import Testing
@testable import StashRedis

/// One cluster for the suite it is applied to (building one costs a few seconds): started before
/// the suite's first test and stopped after its last, whether the tests passed, failed or threw.
struct SharedCluster: SuiteTrait, TestScoping {
    /// The cluster, while the suite runs.
    @TaskLocal static var current: RedisClusterProcesses?

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try RedisRequirement.requireServer()
        let cluster = try RedisClusterProcesses()
        defer { cluster.stop() }
        try await Self.$current.withValue(cluster) { try await function() }
    }
}

extension RedisSuites {
    /// Against a real local cluster of three primaries with a replica each, one for the suite
    /// (``SharedCluster``); its tests run one at a time (``RedisSuites``), as some move slots or fail
    /// a primary over.
    @Suite(.requiresRedisServer, .timeLimit(.minutes(5)), SharedCluster())
    struct RedisClusterClientTests {
        private let cluster: RedisClusterProcesses

        init() throws {
            cluster = try #require(SharedCluster.current, "the suite's cluster is started by its SharedCluster trait")
        }

        private func makeClient() -> RedisClusterClient {
            var configuration = RedisConfiguration()
            configuration.commandTimeout = .seconds(2)
            configuration.initialReconnectDelay = .milliseconds(10)
            configuration.maximumReconnectDelay = .milliseconds(100)
            return RedisClusterClient(seeds: [("127.0.0.1", cluster.servers[0].port)], configuration: configuration, maximumRedirections: 16)
        }

        @Test func keysSpreadOverEveryPrimaryAndReadBack() async throws {
            let client = makeClient()
            for index in 0..<200 { try await client.set("spread:\(index)", to: ByteBuffer(string: "\(index)")) }
            for index in 0..<200 {
                let actual14 = try await client.get("spread:\(index)").map { String(buffer: $0) }
                #expect(actual14 == "\(index)")
            }
            let primaries = try await client.primaryClients()
            #expect(primaries.count == 3)
            var counts: [Int] = []
            for primary in primaries {
                var count = 0
                try await primary.scan(matching: "spread:*") { count += $0.count }
                counts.append(count)
            }
            #expect(counts.reduce(0, +) == 200)
            #expect(counts.allSatisfy { $0 > 0 }, "every primary holds some keys: \(counts)")
            // Hash-tagged keys share a slot, so a multi-key command works.
            try await client.set("{tag}:a", to: ByteBuffer(string: "1"))
            try await client.set("{tag}:b", to: ByteBuffer(string: "2"))
            let actual15 = try await client.mget(["{tag}:a", "{tag}:b"])
            #expect(actual15 == [ByteBuffer(string: "1"), ByteBuffer(string: "2")])
            await client.close()
        }

        /// A key moved mid-migration answers ASK from its old node; the client follows it with ASKING.
        @Test func askRedirectionDuringASlotMigration() async throws {
            let client = makeClient()
            let key = "migrating-key"
            let slot = RedisKeySlot(key: key).rawValue
            try await client.set(key, to: ByteBuffer(string: "moved along"))
            let sourcePort = try cluster.primaryPort(forSlot: slot, askingPort: cluster.servers[0].port)
            let primaries = try await client.primaryClients().map(\.configuration.port)
            let targetPort = primaries.first { $0 != sourcePort }!
            let sourceID = try RedisServerProcess.runCLI(["-p", "\(sourcePort)", "CLUSTER", "MYID"]).trimmingCharacters(in: .whitespacesAndNewlines)
            let targetID = try RedisServerProcess.runCLI(["-p", "\(targetPort)", "CLUSTER", "MYID"]).trimmingCharacters(in: .whitespacesAndNewlines)
            try RedisServerProcess.runCLI(["-p", "\(targetPort)", "CLUSTER", "SETSLOT", "\(slot)", "IMPORTING", sourceID])
            try RedisServerProcess.runCLI(["-p", "\(sourcePort)", "CLUSTER", "SETSLOT", "\(slot)", "MIGRATING", targetID])
            try RedisServerProcess.runCLI(["-p", "\(sourcePort)", "MIGRATE", "127.0.0.1", "\(targetPort)", key, "0", "5000"])
            // The source no longer has the key: it answers ASK, and the target serves it.
            let actual16 = try await client.get(key).map { String(buffer: $0) }
            #expect(actual16 == "moved along")
            // Finish the migration: now the source answers MOVED and the client updates its map.
            for port in cluster.servers.map(\.port) {
                _ = try? RedisServerProcess.runCLI(["-p", "\(port)", "CLUSTER", "SETSLOT", "\(slot)", "NODE", targetID])
            }
            let actual17 = try await client.get(key).map { String(buffer: $0) }
            #expect(actual17 == "moved along")
            await client.close()
        }

        /// A replica takes over its primary (CLUSTER FAILOVER): the client's stale map
        /// gets MOVED, it rereads the slot map, and reads and writes go on.
        @Test func aFailoverIsFollowedByATopologyRefresh() async throws {
            let client = makeClient()
            let key = "failover-key"
            let slot = RedisKeySlot(key: key).rawValue
            try await client.set(key, to: ByteBuffer(string: "before"))
            let oldPrimary = try cluster.primaryPort(forSlot: slot, askingPort: cluster.servers[0].port)
            let replica = try cluster.replicaPort(ofPrimaryPort: oldPrimary)
            try cluster.waitUntil("the replica is in sync") {
                try RedisServerProcess.runCLI(["-p", "\(replica)", "INFO", "replication"]).contains("master_link_status:up")
            }
            _ = try await client.send(RedisCommand("WAIT", key: key, ["1", "5000"]))
            try RedisServerProcess.runCLI(["-p", "\(replica)", "CLUSTER", "FAILOVER"])
            try cluster.waitUntil("the replica is a primary") {
                try RedisServerProcess.runCLI(["-p", "\(replica)", "ROLE"]).hasPrefix("master")
            }
            try cluster.waitUntil("the old primary agrees") {
                try cluster.primaryPort(forSlot: slot, askingPort: oldPrimary) == replica
            }
            let actual18 = try await client.get(key).map { String(buffer: $0) }
            #expect(actual18 == "before")
            try await client.set(key, to: ByteBuffer(string: "after"))
            let actual19 = try await client.get(key).map { String(buffer: $0) }
            #expect(actual19 == "after")
            let ports = try await client.primaryClients().map(\.configuration.port)
            #expect(ports.contains(replica), "the refreshed map names the new primary: \(ports)")
            #expect(!ports.contains(oldPrimary))
            await client.close()
        }

        /// The tier on a cluster: values, invalidations and the lock all work across nodes.
        @Test func theTierOnACluster() async throws {
            let first = makeClient()
            let second = makeClient()
            let candidates = cluster.servers.map { RedisConfiguration(host: "127.0.0.1", port: $0.port) }
            let writer = RedisCacheTier(executor: first, codec: .string, configuration: .init(keyPrefix: "c:"), subscribeOn: candidates)
            let reader = RedisCacheTier(executor: second, codec: .string, configuration: .init(keyPrefix: "c:"), subscribeOn: candidates)
            let heard = InvalidationRecorder()
            try await reader.startReceivingInvalidations(heard.handler)
            for index in 0..<50 { try await writer.setValue("v\(index)", forKey: "k\(index)", ttl: .seconds(60)) }
            try await heard.wait(for: .key("k49"))
            let read = try await reader.entry(forKey: "k7")
            #expect(read?.value == "v7")
            // A batch over keys of every node: one pipelined write per node.
            let batch = try await reader.entries(forKeys: (0..<50).map { "k\($0)" } + ["absent"])
            #expect(batch.map { $0?.value } == (0..<50).map { "v\($0)" } + [nil])
            let lock = try await writer.acquireLock(forKey: "k1", ttl: .seconds(10))
            #expect(lock != nil)
            let contended = try await reader.acquireLock(forKey: "k1", ttl: .seconds(10))
            #expect(contended == nil)
            try await writer.releaseLock(#require(lock))
            try await writer.removeAll()
            let gone = try await reader.entry(forKey: "k7")
            #expect(gone == nil)
            await reader.close()
            await first.close()
            await second.close()
        }
    }
}
#endif  // Redis
