#if Redis
import Foundation
import Logging
import StashTestSupport
import Testing
@testable import Stash
@testable import StashRedis

extension RedisSuites {
    /// Redis killed (SIGKILL) and restarted, with its append-only file, in the
    /// middle of a read/write burst through a `Cache` with memory, disk and Redis:
    /// the restarted Redis holds what it had acknowledged, older than what the
    /// cache wrote during the outage.
    @Suite(.requiresRedisServer, .timeLimit(.minutes(5))) struct CacheWithRedisFaultTests {
        @Test func redisKilledAndRestartedDuringABurst() async throws {
            try RedisRequirement.requireServer()
            let server = try RedisServerProcess.start(["--appendonly", "yes", "--appendfsync", "always"])
            defer { server.stop() }
            let client = RedisClient(configuration: server.faultTestConfiguration)
            let breakerClock = ManualClock()
            let tierLogs = LogRecorder(), tierLogger = tierLogs.logger
            let cacheLogs = LogRecorder(), cacheLogger = cacheLogs.logger
            let tier = RedisCacheTier(executor: client, codec: .string, configuration: .init(keyPrefix: "burst:"),
                                      clock: breakerClock, logger: tierLogger)
            let directory = try TemporaryDirectory(prefix: "stash-redis-cache")
            // The cache's clock times the quiet second that ends an outage.
            let cacheClock = ManualClock()
            let cache = try Cache<String>(
                memory: MemoryCache(configuration: .init(label: "burst", clock: cacheClock, logger: cacheLogger)),
                disk: DiskCache(directory: directory.path, codec: .string, configuration: .init(logger: cacheLogger)),
                remote: tier, logger: cacheLogger)
            await cache.waitUntilReceivingInvalidations()
            let applied = cache.recordAppliedInvalidations()
            let burst = Burst(cache: cache)
            let running = Task { await burst.run() }
            defer { burst.stop.withLock { $0 = true } }  // also when a wait below runs out

            // Healthy, then Redis dies mid-burst: the burst goes on against the local tiers.
            try await burst.progress.wait(reaching: 300)
            server.kill()
            let atKill = burst.progress.count
            try await burst.progress.wait(reaching: atKill + 600)
            #expect(tier.engine.breaker.phase == .open, "the breaker stops paying timeouts")

            // Redis comes back with its append-only file: the values it acknowledged
            // before the kill, older than what the cache wrote since. From here the
            // burst only reads, so the last versions stay the ones written in the outage.
            burst.writing.withLock { $0 = false }
            try server.launch()
            breakerClock.advance(by: .seconds(5))
            // The subscription comes back and says that anything may have changed;
            // the cache keeps the keys Redis holds older copies of, and repairs them.
            try await applied.wait(for: .all)
            let atRecovery = burst.progress.count
            try await burst.progress.wait(reaching: atRecovery + 600)
            burst.stop.withLock { $0 = true }
            await running.value

            #expect(burst.failures.withLock { $0 } == [], "no call failed and no caller saw a value older than one it had seen")
            // Every write reached the local tiers, and the invalidation of everything kept the keys
            // Redis was missing: once they are repaired, the last version of each key is served, and
            // Redis holds no copy older than the cache's (each key is gone or current).
            try await cache.waitUntilRepaired(advancing: breakerClock)
            #expect(tier.engine.breaker.phase == .closed)
            try await burst.checkEveryLastWrite(in: tier)
            // The outage ends at the first success a quiet second after its last failure: until then,
            // a restarted server that answers once and fails again is the same outage.
            #expect(cacheLogs.messages(at: .info).count == 0, "not over before the quiet second")
            cacheClock.advance(by: .seconds(1))
            let probe = try await cache.value(forKey: "probe")
            #expect(probe == nil)
            // One outage, logged once by the cache, not per call: one warning and one recovery line,
            // against hundreds of failed remote calls. The tier's breaker notes it at debug level only.
            let warnings = cacheLogs.count(atLeast: .warning)
            let recoveries = cacheLogs.messages(at: .info).count
            #expect(warnings == 1, "\(cacheLogs.messages(at: .warning))")
            #expect(recoveries == 1, "the recovery is logged once")
            #expect(tierLogs.count(atLeast: .error) == 0, "\(tierLogs.messages(at: .error))")
            #expect(tierLogs.messages(at: .debug).filter { $0.contains("circuit breaker opened") }.count == 1)
            await tier.close()
            await client.close()
        }

        /// Redis frozen (SIGSTOP: connections open, nothing answers) in the middle of a burst, then
        /// resumed: no call fails, the breaker opens and closes once, the writes made meanwhile are
        /// all kept, and Redis ends with the last write of each key or nothing (issue #28, a hung Redis).
        @Test func redisFrozenAndResumedDuringABurst() async throws {
            try RedisRequirement.requireServer()
            let server = try RedisServerProcess.start()
            defer { server.stop() }
            let client = RedisClient(configuration: server.faultTestConfiguration)
            let breakerClock = ManualClock()
            let tierLogs = LogRecorder()
            let directory = try TemporaryDirectory(prefix: "stash-redis-frozen")
            let (cache, tier) = try faultTestCache(client, prefix: "frozen:", breakerClock: breakerClock,
                                                   directory: directory, tierLogger: tierLogs.logger)
            await cache.waitUntilReceivingInvalidations()
            let burst = Burst(cache: cache)
            let running = Task { await burst.run() }
            defer { burst.stop.withLock { $0 = true } }  // also when a wait below runs out

            try await burst.progress.wait(reaching: 300)
            server.pause()
            let atPause = burst.progress.count
            try await burst.progress.wait(reaching: atPause + 600)
            #expect(tier.engine.breaker.phase == .open, "the breaker stops paying timeouts")

            server.resume()
            burst.writing.withLock { $0 = false }
            breakerClock.advance(by: .seconds(1))
            try await cache.waitUntilRepaired(advancing: breakerClock)
            try await yield(until: { tier.engine.breaker.phase == .closed })
            let atResume = burst.progress.count
            try await burst.progress.wait(reaching: atResume + 300)
            burst.stop.withLock { $0 = true }
            await running.value

            #expect(burst.failures.withLock { $0 } == [], "no call failed and no caller saw a value older than one it had seen")
            try await burst.checkEveryLastWrite(in: tier)
            #expect(tierLogs.messages(at: .debug).filter { $0.contains("circuit breaker opened") }.count == 1, "the breaker opened once")
            #expect(tierLogs.messages(at: .debug).filter { $0.contains("circuit breaker closed") }.count == 1, "and closed once")
            await tier.close()
            await client.close()
        }

        /// One instance cut off from Redis (its connections reset, through a proxy the test controls)
        /// while another still reaches it, then healed (issue #28, a network partition). Meanwhile the
        /// cut-off instance serves its own writes; after, it keeps them, it reads what the other wrote
        /// meanwhile (the invalidations it missed are made up by the invalidation of everything), and
        /// Redis holds the last write of each key or nothing, so the other never reads the cut-off
        /// instance's older copies.
        @Test func anInstanceCutOffFromRedisKeepsItsWritesAndTheFleetConvergesAfter() async throws {
            try RedisRequirement.requireServer()
            let server = try RedisServerProcess.start()
            defer { server.stop() }
            let proxy = try TCPProxy(to: server.port)
            defer { proxy.stop() }
            var throughProxy = server.faultTestConfiguration
            throughProxy.port = proxy.port
            let cutClient = RedisClient(configuration: throughProxy)
            let otherClient = RedisClient(configuration: server.faultTestConfiguration)
            let cutDirectory = try TemporaryDirectory(prefix: "stash-redis-cut")
            let otherDirectory = try TemporaryDirectory(prefix: "stash-redis-other")
            let (cut, cutTier) = try faultTestCache(cutClient, prefix: "cut:", breakerClock: ManualClock(), directory: cutDirectory)
            let (other, otherTier) = try faultTestCache(
                otherClient, prefix: "cut:", breakerClock: ManualClock(), directory: otherDirectory)
            await cut.waitUntilReceivingInvalidations()
            await other.waitUntilReceivingInvalidations()
            let applied = cut.recordAppliedInvalidations(), appliedByOther = other.recordAppliedInvalidations()
            let own = (0..<5).map { "own\($0)" }, others = (0..<5).map { "other\($0)" }
            for key in own { try await cut.setValue("1", forKey: key) }
            for key in others { try await other.setValue("1", forKey: key) }
            for key in own + others {  // both instances hold every key locally
                _ = try await cut.value(forKey: key)
                _ = try await other.value(forKey: key)
            }

            proxy.cut()
            try await applied.wait(for: .subscriptionLost)
            for key in own { try await cut.setValue("2", forKey: key) }
            for key in others { try await other.setValue("2", forKey: key) }
            for key in own {
                let read = try await cut.value(forKey: key)
                #expect(read == "2", "\(key): the cut-off instance serves its own writes")
            }

            proxy.heal()
            try await applied.wait(for: .all)
            try await cut.waitUntilRepaired()
            // The repair's removals reach the other instance: the second invalidation of each key
            // (the first was of the write before the cut).
            try await appliedByOther.wait(forEach: own.map { .key($0) }, occurrence: 2)
            for key in own {
                let mine = try await cut.value(forKey: key)
                #expect(mine == "2", "\(key): kept by the instance that wrote it")
                let theirs = try await other.value(forKey: key)
                #expect(theirs != "1", "\(key): the other instance no longer serves the older value")
                let shared = try await otherTier.entry(forKey: key)?.value
                #expect(shared == nil || shared == "2", "\(key): Redis holds \(shared ?? "-")")
            }
            for key in others {
                let read = try await cut.value(forKey: key)
                #expect(read == "2", "\(key): the cut-off instance reads what the other wrote meanwhile")
            }
            await cutTier.close()
            await otherTier.close()
            await cutClient.close()
            await otherClient.close()
        }

        /// The writer dies during the outage, so nobody repairs its keys; Redis restarts from its
        /// append-only file with the values from before. The tier sees the new `run_id` when its
        /// subscription comes back and empties the namespace before the cache reads Redis again, so
        /// the surviving instance never reads the restarted server's older copies (issue #28, case 2,
        /// for a writer that died). With `emptiesAfterRestart` off, it reads them. With an empty
        /// prefix the namespace holds the restart guard too, which the emptying leaves in place (it
        /// deleted it, and the other instances stopped waiting before the emptying was done).
        @Test func aRestartedRedisIsEmptiedSoNoInstanceReadsItsOlderCopies() async throws {
            for (empties, prefix) in [(true, "dead:"), (false, "dead:"), (true, "")] {
                try RedisRequirement.requireServer()
                let server = try RedisServerProcess.start(["--appendonly", "yes", "--appendfsync", "always"])
                defer { server.stop() }
                let writerClient = RedisClient(configuration: server.faultTestConfiguration)
                let readerClient = RedisClient(configuration: server.faultTestConfiguration)
                var configuration = RedisCacheTier<String>.Configuration(keyPrefix: prefix)
                configuration.emptiesAfterRestart = empties
                let writerTier = RedisCacheTier(executor: writerClient, codec: .string, configuration: configuration,
                                                clock: ManualClock(), logger: Logger(label: "tier"))
                let readerTier = RedisCacheTier(executor: readerClient, codec: .string, configuration: configuration,
                                                clock: ManualClock(), logger: Logger(label: "tier"))
                let reader = try Cache<String>(memory: MemoryCache(), disk: nil, remote: readerTier, logger: Logger(label: "cache"))
                await reader.waitUntilReceivingInvalidations()
                let applied = reader.recordAppliedInvalidations()
                for key in ["k0", "k1"] {
                    try await writerTier.setValue("before", forKey: key, ttl: nil)
                    let read = try await reader.value(forKey: key)
                    #expect(read == "before")
                }

                // Redis dies; the writer changes the keys (a write its own cache would keep) and dies
                // too, before Redis is back: nobody will repair them.
                server.kill()
                try await applied.wait(for: .subscriptionLost)
                await writerTier.close()
                await writerClient.close()
                try server.launch()
                try await applied.wait(for: .all)

                for key in ["k0", "k1"] {
                    let read = try await reader.value(forKey: key)
                    if empties {
                        #expect(read == nil, "\(key): the restarted server's older copy is gone before the reader reads again")
                    } else {
                        #expect(read == "before", "\(key): kept, by configuration")
                    }
                }
                if empties {
                    let guardKey = try server.cli(["KEYS", "stash-restart:*"]).trimmingCharacters(in: .whitespacesAndNewlines)
                    #expect(guardKey.hasPrefix("stash-restart:\(prefix)"), "prefix \"\(prefix)\": the guard key stays")
                    let state = try server.cli(["GET", guardKey]).trimmingCharacters(in: .whitespacesAndNewlines)
                    #expect(state == "done", "prefix \"\(prefix)\": the emptying finished and said so")
                }
                await readerTier.close()
                await readerClient.close()
            }
        }

        /// A cache (memory, disk, Redis) on `client`, with the tier's breaker on `breakerClock`.
        private func faultTestCache(
            _ client: RedisClient, prefix: String, breakerClock: ManualClock, directory: TemporaryDirectory,
            subscribeOn: [RedisConfiguration]? = nil, tierLogger: Logger = Logger(label: "tier")
        ) throws -> (Cache<String>, RedisCacheTier<String>) {
            let tier = RedisCacheTier(executor: client, codec: .string, configuration: .init(keyPrefix: prefix),
                                      subscribeOn: subscribeOn, clock: breakerClock, logger: tierLogger)
            let cache = try Cache<String>(
                memory: MemoryCache(), disk: DiskCache(directory: directory.path, codec: .string), remote: tier,
                logger: Logger(label: "cache"))
            return (cache, tier)
        }

        /// A cache for the restart tests: a subscription that retries every 200 ms
        /// (`faultTestConfiguration` retries at once), so that a call made as soon as Redis is back
        /// usually reaches it before the subscription does.
        private func restartTestCache(
            _ server: RedisServerProcess, _ client: RedisClient, breakerClock: ManualClock, directory: TemporaryDirectory
        ) throws -> (Cache<String>, RedisCacheTier<String>) {
            var subscription = server.faultTestConfiguration
            subscription.initialReconnectDelay = RedisSubscriber.maximumResubscribeDelay
            subscription.maximumReconnectDelay = RedisSubscriber.maximumResubscribeDelay
            return try faultTestCache(client, prefix: "restart:", breakerClock: breakerClock, directory: directory,
                                      subscribeOn: [subscription])
        }

        /// The writes an instance made while Redis was down outlive Redis's restart from its
        /// append-only file, whichever comes first once it is back: a call that succeeds (which
        /// starts the repair of the stale keys) or the subscription's return (whose invalidation of
        /// everything drops all the rest). Issue #28, case 1: the repair used to come first,
        /// removing the keys from Redis and clearing their marks, and the invalidation of
        /// everything then dropped them from the local tiers: every outage write was lost.
        @Test func outageWritesSurviveARestartWhenARepairPrecedesTheSubscription() async throws {
            try RedisRequirement.requireServer()
            let server = try RedisServerProcess.start(["--appendonly", "yes", "--appendfsync", "always"])
            defer { server.stop() }
            let client = RedisClient(configuration: server.faultTestConfiguration)
            let breakerClock = ManualClock()
            let directory = try TemporaryDirectory(prefix: "stash-redis-restart")
            let (cache, tier) = try restartTestCache(server, client, breakerClock: breakerClock, directory: directory)
            await cache.waitUntilReceivingInvalidations()
            let applied = cache.recordAppliedInvalidations()
            let keys = (0..<10).map { "k\($0)" }
            for key in keys { try await cache.setValue("before", forKey: key) }

            server.kill()
            try await applied.wait(for: .subscriptionLost)
            for key in keys { try await cache.setValue("outage", forKey: key) }
            #expect(cache.core.remoteLink?.hasStaleKeys == true)

            // Back with its append-only file ("before" everywhere). A call succeeds before the
            // subscription returns (it retries every 200 ms; on a loaded machine the order may turn,
            // and the outcome must be the same): the repair must wait for it.
            try server.launch()
            // Calls straight to the tier first, until ten in a row get through: the pool then holds
            // no connection to the killed server, and the cache's own call below, and a repair it
            // would start, reach Redis at once.
            var answered = 0
            for _ in 0..<200 where answered < 10 {
                breakerClock.advance(by: .seconds(5))
                do {
                    _ = try await tier.entry(forKey: "probe")
                    answered += 1
                } catch {
                    answered = 0
                }
            }
            #expect(answered == 10)
            let probe = try await cache.value(forKey: "probe")
            #expect(probe == nil)
            try await applied.wait(for: .all)
            try await cache.waitUntilRepaired(advancing: breakerClock)

            for key in keys {
                let local = try await cache.value(forKey: key)
                #expect(local == "outage", "\(key): the instance reads its own last write")
                let shared = try await tier.entry(forKey: key)?.value
                #expect(shared == nil, "\(key): Redis holds nothing older than the last write")
            }
            await tier.close()
            await client.close()
        }

        /// The subscription's return is a sign that Redis answers: the tier's breaker lets a probe
        /// through at once instead of after the rest of its cool-down, so the stale keys are
        /// repaired and another instance stops reading the restarted server's older copies without
        /// any call of this instance's and without the breaker's clock moving. Issue #28, case 2,
        /// for a writer that is alive.
        @Test func theSubscriptionsReturnRepairsAtOnceAndOtherInstancesStopReadingOlderCopies() async throws {
            try RedisRequirement.requireServer()
            let server = try RedisServerProcess.start(["--appendonly", "yes", "--appendfsync", "always"])
            defer { server.stop() }
            let client = RedisClient(configuration: server.faultTestConfiguration)
            let otherClient = RedisClient(configuration: server.faultTestConfiguration)
            let directory = try TemporaryDirectory(prefix: "stash-redis-restart")
            let otherDirectory = try TemporaryDirectory(prefix: "stash-redis-restart-other")
            let (writer, writerTier) = try restartTestCache(server, client, breakerClock: ManualClock(), directory: directory)
            let (reader, readerTier) = try restartTestCache(
                server, otherClient, breakerClock: ManualClock(), directory: otherDirectory)
            await writer.waitUntilReceivingInvalidations()
            await reader.waitUntilReceivingInvalidations()
            let applied = writer.recordAppliedInvalidations()
            let keys = (0..<10).map { "k\($0)" }
            for key in keys { try await writer.setValue("before", forKey: key) }

            server.kill()
            try await applied.wait(for: .subscriptionLost)
            for key in keys { try await writer.setValue("outage", forKey: key) }
            try await yield(until: { writerTier.engine.breaker.phase == .open })

            try server.launch()
            try await applied.wait(for: .all)
            try await writer.waitUntilRepaired()
            #expect(writerTier.engine.breaker.phase == .closed, "closed by the probe the subscription let through")

            for key in keys {
                let own = try await writer.value(forKey: key)
                #expect(own == "outage", "\(key)")
                let other = try await reader.value(forKey: key)
                #expect(other == nil, "\(key): the restarted server's older copy is gone; the other instance misses")
            }
            await writerTier.close()
            await readerTier.close()
            await client.close()
            await otherClient.close()
        }

        /// The subscription alone dropped (Redis kills the subscriber's connection; calls go on
        /// succeeding): the cache logs it once, as an outage, and its end once; the tier's
        /// subscriber notes both at debug level only.
        @Test func aLostSubscriptionAloneIsOneOutageLoggedByTheCache() async throws {
            try RedisRequirement.requireServer()
            let server = try RedisServerProcess.start()
            defer { server.stop() }
            let client = RedisClient(configuration: server.faultTestConfiguration)
            let cacheLogs = LogRecorder(), tierLogs = LogRecorder()
            let tier = RedisCacheTier(executor: client, codec: .string, configuration: .init(keyPrefix: "sub:"),
                                      clock: ManualClock(), logger: tierLogs.logger)
            let clock = ManualClock()
            let cache = try Cache<String>(
                memory: MemoryCache(configuration: .init(label: "sub", clock: clock)), disk: nil, remote: tier,
                logger: cacheLogs.logger)
            await cache.waitUntilReceivingInvalidations()
            let link = try #require(cache.core.remoteLink)

            try server.cli(["CLIENT", "KILL", "TYPE", "pubsub"])
            try await yield(until: { link.subscriptionLosses == 1 })
            #expect(cacheLogs.count(atLeast: .warning) == 1, "\(cacheLogs.messages(at: .warning))")
            clock.advance(by: .seconds(1))
            try await yield(until: { !link.isSubscriptionDown })  // back, and its return applied
            // Its return ends the outage once the quiet second has passed; else the next success does.
            _ = try await cache.value(forKey: "probe")
            #expect(cacheLogs.messages(at: .info).count == 1, "one recovery")
            #expect(cacheLogs.count(atLeast: .warning) == 1)
            #expect(tierLogs.count(atLeast: .info) == 0, "\(tierLogs.messages(at: .warning))")
            #expect(tierLogs.messages(at: .debug).contains { $0.contains("subscription lost") })
            await tier.close()
            await client.close()
        }

        /// Redis restarted, answering once and then failing again: one outage for
        /// the cache, its calls' failures and its subscription's losses together, ended only by a
        /// success a quiet second after its last failure.
        @Test func aRestartThatAnswersOnceAndFailsAgainIsOneOutage() async throws {
            try RedisRequirement.requireServer()
            let server = try RedisServerProcess.start()
            defer { server.stop() }
            let client = RedisClient(configuration: server.faultTestConfiguration)
            let cacheLogs = LogRecorder(), cacheLogger = cacheLogs.logger
            let tier = RedisCacheTier(executor: client, codec: .string, configuration: .init(keyPrefix: "flap:"),
                                      clock: ManualClock(), logger: Logger(label: "tier"))
            let clock = ManualClock()
            let cache = try Cache<String>(
                memory: MemoryCache(configuration: .init(label: "flap", clock: clock)), disk: nil, remote: tier,
                logger: cacheLogger)
            await cache.waitUntilReceivingInvalidations()
            let recoveries = { cacheLogs.messages(at: .info).count }
            func read() async throws {
                let value = try await cache.value(forKey: "k")
                #expect(value == nil, "a miss, and never an error")
            }

            let link = try #require(cache.core.remoteLink)
            try await read()
            server.kill()
            try await read()
            // The subscription's loss is part of the same outage; waited for, so that it is not
            // heard after the outage ends.
            try await yield(until: { link.subscriptionLosses == 1 })
            #expect(cacheLogs.count(atLeast: .warning) == 1, "the outage starts")
            try server.launch()
            try await read()
            try await yield(until: { !link.isSubscriptionDown })  // back, and its return applied
            server.kill()
            try await read()
            try await yield(until: { link.subscriptionLosses == 2 })
            try server.launch()
            try await read()
            #expect(recoveries() == 0, "answering within a second of a failure does not end the outage")
            // Nor does a success while the subscription is lost: its return does (waited for here).
            try await yield(until: { !link.isSubscriptionDown })

            clock.advance(by: .seconds(1))
            try await read()
            #expect(cacheLogs.count(atLeast: .warning) == 1, "\(cacheLogs.messages(at: .warning))")
            #expect(recoveries() == 1, "one recovery, logged once")
            await tier.close()
            await client.close()
        }
    }
}
#endif  // Redis
