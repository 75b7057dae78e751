#if Redis
import Foundation
import NIOCore
import Stash
import StashTestSupport
import Testing
@testable import StashRedis

extension RedisSuites {
    @Suite(.requiresRedisServer, .timeLimit(.minutes(5))) final class RedisCacheTierTests {
        /// The test's own server, stopped at deinit (whether the test passed, failed or threw).
        private let server: RedisServerProcess
        /// What the test made, closed by ``closingTiers(after:)``.
        private var clients: [RedisClient] = []
        private var tiers: [RedisCacheTier<String>] = []

        init() throws {
            try RedisRequirement.requireServer()
            server = try RedisServerProcess.start(["--proto-max-bulk-len", "1mb"])
        }

        deinit {
            server.stop()
        }

        /// Runs a test's body, then closes every tier and client it made, whether the body returned
        /// or threw.
        private func closingTiers(after body: () async throws -> Void) async throws {
            try await run(body) { await closeTiersAndClients() }
        }

        private func closeTiersAndClients() async {
            for tier in tiers { await tier.close() }
            for client in clients { await client.close() }
            tiers = []
            clients = []
        }

        private func makeTier(
            prefix: String = "app:", clock: any CacheClock = SystemClock(), usesRESP3: Bool = true
        ) -> RedisCacheTier<String> {
            var configuration = RedisConfiguration(host: "127.0.0.1", port: server.port)
            configuration.usesRESP3 = usesRESP3
            let client = RedisClient(configuration: configuration)
            clients.append(client)
            let tier = RedisCacheTier(executor: client, codec: .string, configuration: .init(keyPrefix: prefix), clock: clock)
            tiers.append(tier)
            return tier
        }

        @Test func aValueComesBackWithItsRemainingTimeToLive() async throws {
            try await closingTiers {
                let tier = makeTier()
                try await tier.setValue("hello", forKey: "greeting", ttl: .seconds(60))
                let entry = try await tier.entry(forKey: "greeting")
                #expect(entry?.value == "hello")
                let ttl = try #require(entry?.ttl)
                #expect(ttl > .seconds(55))
                #expect(ttl <= .seconds(60))
                // Redis carries the expiry too, and the key is namespaced.
                let pttl = Int(try server.cli(["PTTL", "app:greeting"]).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -3
                #expect(pttl > 55_000)
                try await tier.setValue("forever", forKey: "f", ttl: nil)
                let forever = try await tier.entry(forKey: "f")
                #expect(forever?.value == "forever")
                #expect(forever?.ttl == nil)
                let missing = try await tier.entry(forKey: "missing")
                #expect(missing == nil)
            }
        }

        @Test func anExpiredHeaderIsAMissEvenBeforeRedisDropsTheKey() async throws {
            try await closingTiers {
                let wall = ManualClock(start: 1_700_000_000_000_000_000)
                let client = RedisClient(configuration: RedisConfiguration(host: "127.0.0.1", port: server.port))
                clients.append(client)
                let tier = RedisCacheTier(executor: client, codec: .string, wallClock: wall)
                try await tier.setValue("v", forKey: "k", ttl: .seconds(30))
                wall.advance(by: .seconds(31))
                let entry = try await tier.entry(forKey: "k")
                #expect(entry == nil)
                #expect(tier.statistics == CacheStatistics(hits: 0, misses: 1))  // an expired header is a miss
            }
        }

        @Test func statisticsCountEveryKeyReadAsAHitOrAMiss() async throws {
            try await closingTiers {
                let tier = makeTier()
                try await tier.setValues([("a", "1"), ("b", "2")], ttl: nil)
                _ = try await tier.entry(forKey: "a")
                _ = try await tier.entry(forKey: "missing")
                _ = try await tier.entries(forKeys: ["a", "b", "missing"])
                #expect(tier.statistics == CacheStatistics(hits: 3, misses: 2))
            }
        }

        @Test func batchesReadAndWriteInOneWrite() async throws {
            try await closingTiers {
                let tier = makeTier()
                try await tier.setValues((0..<20).map { ("b\($0)", "v\($0)") }, ttl: .seconds(60))
                let entries = try await tier.entries(forKeys: ["b0", "missing", "b19"])
                #expect(entries.map { $0?.value } == ["v0", nil, "v19"])
                #expect(entries[2]?.ttl != nil)
            }
        }

        @Test func aBatchOfValuesOfDifferentSizesComesBackIntact() async throws {
            try await closingTiers {
                let tier = makeTier()
                // The payloads of a batch share one buffer: each must come back whole and alone.
                let values = ["", "a", String(repeating: "x", count: 100), String(repeating: "é", count: 3000), "last"]
                let keys = values.indices.map { "size\($0)" }
                try await tier.setValues(Array(zip(keys, values)), ttl: nil)
                let entries = try await tier.entries(forKeys: keys)
                #expect(entries.map { $0?.value } == values)
                #expect(entries.allSatisfy { $0 != nil && $0?.ttl == nil }, "no expiry was asked for")
                let single = try await tier.entries(forKeys: ["size3"])
                #expect(single.map { $0?.value } == [values[3]])
                let none = try await tier.entries(forKeys: [])
                #expect(none.count == 0)
                try await tier.setValues([], ttl: .seconds(1))  // nothing to send
            }
        }

        @Test func aBatchWithATimeToLiveThatIsNotPositiveWritesNothing() async throws {
            try await closingTiers {
                let tier = makeTier()
                do throws(RedisError) {
                    try await tier.setValues([("z1", "a"), ("z2", "b")], ttl: .zero)
                    Issue.record("a time to live of zero is refused")
                } catch {
                    #expect(error.code == .invalidArgument)
                }
                let entries = try await tier.entries(forKeys: ["z1", "z2"])
                #expect(entries.map { $0?.value } == [nil, nil])
            }
        }

        @Test func theStoredFormatIsAHeaderThenTheCodecsBytes() async throws {
            try await closingTiers {
                // Every process of a fleet reads what the others wrote: the layout is fixed.
                let wall = ManualClock(start: 1_700_000_000_000_000_000)
                let client = RedisClient(configuration: RedisConfiguration(host: "127.0.0.1", port: server.port))
                clients.append(client)
                let tier = RedisCacheTier(executor: client, codec: .string, configuration: .init(keyPrefix: "fmt:"), wallClock: wall)
                try await tier.setValue("one", forKey: "a", ttl: .seconds(30))
                try await tier.setValues([("b", "two"), ("c", "three")], ttl: nil)
                func stored(_ key: String) async throws -> [UInt8] {
                    let buffer = try await client.get("fmt:" + key)
                    return try #require(buffer.map { Array($0.readableBytesView) })
                }
                let expiresAt = UInt64(1_700_000_030_000)  // Unix milliseconds, big-endian
                let expiryBytes = (0..<8).map { UInt8(truncatingIfNeeded: expiresAt >> (56 - 8 * UInt64($0))) }
                let storedA = try await stored("a"), storedB = try await stored("b"), storedC = try await stored("c")
                #expect(storedA == [0xC5, 1] + expiryBytes + Array("one".utf8))
                #expect(storedB == [0xC5, 1] + Array(repeating: 0, count: 8) + Array("two".utf8))
                #expect(storedC == [0xC5, 1] + Array(repeating: 0, count: 8) + Array("three".utf8))
            }
        }

        @Test func foreignBytesAreADecodingError() async throws {
            try await closingTiers {
                let tier = makeTier()
                try server.cli(["SET", "app:foreign", "not ours"])
                do throws(RedisError) {
                    _ = try await tier.entry(forKey: "foreign")
                    Issue.record("foreign bytes must not decode")
                } catch {
                    #expect(error.code == .decodingFailed)
                }
            }
        }

        /// Two instances share one Redis: each sees the other's writes and gets the
        /// other's invalidations, never its own.
        @Test func twoInstancesSeeEachOthersWritesAndInvalidations() async throws {
            try await closingTiers {
                // One subscribed in RESP3 (messages are pushes), one in RESP2 (messages are arrays).
                let first = makeTier()
                let second = makeTier(usesRESP3: false)
                let firstHeard = InvalidationRecorder()
                let secondHeard = InvalidationRecorder()
                try await first.startReceivingInvalidations(firstHeard.handler)
                try await second.startReceivingInvalidations(secondHeard.handler)

                try await first.setValue("from first", forKey: "shared", ttl: .seconds(60))
                try await secondHeard.wait(for: .key("shared"))
                let seen = try await second.entry(forKey: "shared")
                #expect(seen?.value == "from first")

                try await second.removeValue(forKey: "shared")
                try await firstHeard.wait(for: .key("shared"))
                let gone = try await first.entry(forKey: "shared")
                #expect(gone == nil)

                try await second.setValue("x", forKey: "other", ttl: nil)
                try await firstHeard.wait(for: .key("other"))
                #expect(firstHeard.received == [.key("shared"), .key("other")])
                #expect(secondHeard.received == [.key("shared")], "an instance never hears its own changes")
            }
        }

        /// Between a lost subscription and the `.all` of its return the handler hears nothing: a
        /// peer's messages that reach the new subscription before the tier has checked for a
        /// restart are dropped (the `.all` covers them; a peer's `.all` would be taken for the
        /// return), and are heard again after it.
        @Test func nothingIsHeardBetweenALostSubscriptionAndItsReturn() async throws {
            try await closingTiers {
                let tier = makeTier()
                let peer = makeTier()
                let heard = InvalidationRecorder()
                try await tier.startReceivingInvalidations(heard.handler)
                // The peer removes keys without pause (each one a PUBLISH), through the loss and the
                // return, so that its messages reach the new subscription as soon as it is made.
                let publishing = Task {
                    var index = 0
                    while !Task.isCancelled && index < 1_000_000 {
                        _ = try? await peer.removeValue(forKey: "p\(index)")
                        index += 1
                    }
                }
                defer { publishing.cancel() }  // also when a wait below throws
                try await heard.wait(for: .key("p1"))
                try server.cli(["CLIENT", "KILL", "TYPE", "pubsub"])
                try await heard.wait(for: .all)
                func heardAfterReturn() -> Bool {
                    heard.received.drop { $0 != .all }.contains { if case .key = $0 { true } else { false } }
                }
                try await yield(until: heardAfterReturn)
                publishing.cancel()
                await publishing.value  // before the tiers close

                let received = heard.received
                let lost = try #require(received.firstIndex(of: .subscriptionLost))
                let back = try #require(received[lost...].firstIndex(of: .all))
                #expect(received[(lost + 1)..<back].isEmpty, "heard between the loss and the return: \(received[(lost + 1)..<back].prefix(5))")
                #expect(received.filter { $0 == .subscriptionLost }.count == 1)
                #expect(received.filter { $0 == .all }.count == 1, "the peer sent no .all: this one is the return")
            }
        }

        @Test func removeAllClearsOnlyItsPrefixAndTellsEveryone() async throws {
            try await closingTiers {
                let tier = makeTier(prefix: "mine:")
                let neighbour = makeTier(prefix: "theirs:")
                let listener = makeTier(prefix: "mine:")
                let heard = InvalidationRecorder()
                try await listener.startReceivingInvalidations(heard.handler)
                for index in 0..<300 { try await tier.setValue("v\(index)", forKey: "k\(index)", ttl: nil) }
                try await neighbour.setValue("kept", forKey: "k1", ttl: nil)
                try await tier.removeAll()
                try await heard.wait(for: .all)
                let dbsize = try server.cli(["KEYS", "mine:*"]).trimmingCharacters(in: .whitespacesAndNewlines)
                #expect(dbsize == "")
                let kept = try await neighbour.entry(forKey: "k1")
                #expect(kept?.value == "kept")
            }
        }

        @Test func theLockHasOneHolderAndGrowingFencingTokens() async throws {
            try await closingTiers {
                let first = makeTier()
                let second = makeTier()
                let lock = try await first.acquireLock(forKey: "report", ttl: .seconds(30))
                let held = try #require(lock)
                let contended = try await second.acquireLock(forKey: "report", ttl: .seconds(30))
                #expect(contended == nil)
                try await first.releaseLock(held)
                let next = try await second.acquireLock(forKey: "report", ttl: .seconds(30))
                let nextHeld = try #require(next)
                #expect(nextHeld.fencingToken > held.fencingToken)
                do throws(RedisError) {
                    try await first.releaseLock(held)
                    Issue.record("a released lock cannot be released twice")
                } catch {
                    #expect(error.code == .lockNotHeld)
                }
                let stillHeld = try await first.acquireLock(forKey: "report", ttl: .seconds(30))
                #expect(stillHeld == nil, "the stale release did not free the new holder's lock")
                try await second.releaseLock(nextHeld)
                // The fencing counter expires a day after the key's last attempt, so locked keys leave
                // no counter behind for ever.
                let fenceTTL = try #require(Int(server.cli(["PTTL", "{app:report}:fence"]).trimmingCharacters(in: .whitespacesAndNewlines)))
                #expect(fenceTTL > 86_000_000)
                #expect(fenceTTL <= 86_400_000)
            }
        }

        /// The server is started with `proto-max-bulk-len 1mb`: a 2 MB value is refused
        /// with a clear error, and the tier goes on working.
        @Test func aValueOverTheServersBulkLimitIsAClearError() async throws {
            try await closingTiers {
                let tier = makeTier()
                try await tier.setValue("small", forKey: "before", ttl: nil)
                do throws(RedisError) {
                    try await tier.setValue(String(repeating: "x", count: 2 * 1024 * 1024), forKey: "huge", ttl: nil)
                    Issue.record("the server refuses values over proto-max-bulk-len")
                } catch {
                    #expect(error.code == .valueTooLarge, "\(error)")
                }
                let before = try await tier.entry(forKey: "before")
                #expect(before?.value == "small")
                let huge = try await tier.entry(forKey: "huge")
                #expect(huge == nil)
            }
        }

        @Test func aValueOverTheTiersOwnLimitNeverLeaves() async throws {
            try await closingTiers {
                let client = RedisClient(configuration: RedisConfiguration(host: "127.0.0.1", port: server.port))
                clients.append(client)
                var configuration = RedisCacheTier<String>.Configuration()
                configuration.maximumValueSize = 100
                let tier = RedisCacheTier(executor: client, codec: .string, configuration: configuration)
                do throws(RedisError) {
                    try await tier.setValue(String(repeating: "x", count: 200), forKey: "k", ttl: nil)
                    Issue.record("over the tier's limit")
                } catch {
                    #expect(error.code == .valueTooLarge)
                }
            }
        }

        @Test func invalidationMessagesParse() async throws {
            try await closingTiers {
                let tier = makeTier()
                var message = ByteBuffer()
                RESPEncoder.write(tier.engine.invalidationCommand(forKey: "a|b\nc"), into: &message)
                #expect(RedisTierEngine.parseInvalidation(ByteBuffer(string: "kOTHER\na|b\nc"), ownID: tier.instanceID) == .key("a|b\nc"))
                #expect(RedisTierEngine.parseInvalidation(ByteBuffer(string: "k\(tier.instanceID)\nx"), ownID: tier.instanceID) == nil)
                #expect(RedisTierEngine.parseInvalidation(ByteBuffer(string: "aOTHER\n"), ownID: tier.instanceID) == .all)
                #expect(RedisTierEngine.parseInvalidation(ByteBuffer(string: "garbage"), ownID: "x") == nil)
                #expect(RedisTierEngine.parseInvalidation(ByteBuffer(), ownID: "x") == nil)
            }
        }
    }
}
#endif  // Redis
