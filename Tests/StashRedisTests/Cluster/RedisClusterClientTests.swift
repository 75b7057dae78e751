#if Redis
import NIOCore
import StashTestSupport
import XCTest
@testable import StashRedis

/// Against a real local cluster of three primaries with a replica each.
final class RedisClusterClientTests: XCTestCase {
    private static let shared = LockedCluster()

    /// One cluster for the suite: building one costs a few seconds.
    final class LockedCluster: @unchecked Sendable {
        // @unchecked Sendable: XCTest runs this suite's tests one after another; the lock guards the lazy start.
        private let lock = NSLock()
        private var cluster: RedisClusterProcesses?
        func get() throws -> RedisClusterProcesses {
            lock.lock()
            defer { lock.unlock() }
            if let cluster { return cluster }
            let made = try RedisClusterProcesses()
            cluster = made
            return made
        }
        func stop() {
            lock.lock()
            defer { lock.unlock() }
            cluster?.stop()
            cluster = nil
        }
    }

    override class func tearDown() {
        shared.stop()
        super.tearDown()
    }

    private var cluster: RedisClusterProcesses!

    override func setUpWithError() throws {
        try RedisRequirement.requireServer()
        cluster = try Self.shared.get()
    }

    private func makeClient() -> RedisClusterClient {
        var configuration = RedisConfiguration()
        configuration.commandTimeout = .seconds(2)
        configuration.initialReconnectDelay = .milliseconds(10)
        configuration.maximumReconnectDelay = .milliseconds(100)
        return RedisClusterClient(seeds: [("127.0.0.1", cluster.servers[0].port)], configuration: configuration, maximumRedirections: 16)
    }

    func testKeysSpreadOverEveryPrimaryAndReadBack() async throws {
        let client = makeClient()
        for index in 0..<200 { try await client.set("spread:\(index)", to: ByteBuffer(string: "\(index)")) }
        for index in 0..<200 {
            let actual14 = try await client.get("spread:\(index)").map { String(buffer: $0) }
            XCTAssertEqual(actual14, "\(index)")
        }
        let primaries = try await client.primaryClients()
        XCTAssertEqual(primaries.count, 3)
        var counts: [Int] = []
        for primary in primaries {
            var count = 0
            try await primary.scan(matching: "spread:*") { count += $0.count }
            counts.append(count)
        }
        XCTAssertEqual(counts.reduce(0, +), 200)
        XCTAssertTrue(counts.allSatisfy { $0 > 0 }, "every primary holds some keys: \(counts)")
        // Hash-tagged keys share a slot, so a multi-key command works.
        try await client.set("{tag}:a", to: ByteBuffer(string: "1"))
        try await client.set("{tag}:b", to: ByteBuffer(string: "2"))
        let actual15 = try await client.mget(["{tag}:a", "{tag}:b"])
        XCTAssertEqual(actual15, [ByteBuffer(string: "1"), ByteBuffer(string: "2")])
        await client.close()
    }

    /// A key moved mid-migration answers ASK from its old node; the client follows it with ASKING.
    func testAskRedirectionDuringASlotMigration() async throws {
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
        XCTAssertEqual(actual16, "moved along")
        // Finish the migration: now the source answers MOVED and the client updates its map.
        for port in cluster.servers.map(\.port) {
            _ = try? RedisServerProcess.runCLI(["-p", "\(port)", "CLUSTER", "SETSLOT", "\(slot)", "NODE", targetID])
        }
        let actual17 = try await client.get(key).map { String(buffer: $0) }
        XCTAssertEqual(actual17, "moved along")
        await client.close()
    }

    /// A replica takes over its primary (CLUSTER FAILOVER): the client's stale map
    /// gets MOVED, it rereads the slot map, and reads and writes go on.
    func testAFailoverIsFollowedByATopologyRefresh() async throws {
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
        XCTAssertEqual(actual18, "before")
        try await client.set(key, to: ByteBuffer(string: "after"))
        let actual19 = try await client.get(key).map { String(buffer: $0) }
        XCTAssertEqual(actual19, "after")
        let ports = try await client.primaryClients().map(\.configuration.port)
        XCTAssertTrue(ports.contains(replica), "the refreshed map names the new primary: \(ports)")
        XCTAssertFalse(ports.contains(oldPrimary))
        await client.close()
    }

    /// The tier on a cluster: values, invalidations and the lock all work across nodes.
    func testTheTierOnACluster() async throws {
        let first = makeClient()
        let second = makeClient()
        let candidates = cluster.servers.map { RedisConfiguration(host: "127.0.0.1", port: $0.port) }
        let writer = RedisCacheTier(executor: first, codec: .string, configuration: .init(keyPrefix: "c:"), subscribeOn: candidates)
        let reader = RedisCacheTier(executor: second, codec: .string, configuration: .init(keyPrefix: "c:"), subscribeOn: candidates)
        let heard = InvalidationRecorder()
        try await reader.startReceivingInvalidations(heard.handler)
        for index in 0..<50 { try await writer.setValue("v\(index)", forKey: "k\(index)", ttl: .seconds(60)) }
        await fulfillment(of: [heard.expectation(for: .key("k49"))], timeout: defaultWaitTimeoutSeconds)
        let read = try await reader.entry(forKey: "k7")
        XCTAssertEqual(read?.value, "v7")
        // A batch over keys of every node: one pipelined write per node.
        let batch = try await reader.entries(forKeys: (0..<50).map { "k\($0)" } + ["absent"])
        XCTAssertEqual(batch.map { $0?.value }, (0..<50).map { "v\($0)" } + [nil])
        let lock = try await writer.acquireLock(forKey: "k1", ttl: .seconds(10))
        XCTAssertNotNil(lock)
        let contended = try await reader.acquireLock(forKey: "k1", ttl: .seconds(10))
        XCTAssertNil(contended)
        try await writer.releaseLock(XCTUnwrap(lock))
        try await writer.removeAll()
        let gone = try await reader.entry(forKey: "k7")
        XCTAssertNil(gone)
        await reader.close()
        await first.close()
        await second.close()
    }
}
#endif  // Redis
