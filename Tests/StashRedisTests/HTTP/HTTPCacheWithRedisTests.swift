#if Redis
import Foundation
import HTTPTypes
import Logging
import StashTestSupport
import Testing
@testable import Stash
@testable import StashHTTP
@testable import StashRedis

extension RedisSuites {
    /// `HTTPCache` with a Redis tier: two instances (two servers of a fleet, each with its own
    /// memory and disk tiers) sharing one real redis-server, the way `stash-proxy`s or app
    /// servers share one HTTP cache.
    @Suite(.requiresRedisServer, .timeLimit(.minutes(5))) final class HTTPCacheWithRedisTests {
        /// The test's own server, stopped at deinit (whether the test passed, failed or threw).
        private let server: RedisServerProcess
        private var clients: [RedisClient] = []
        private var directories: [TemporaryDirectory] = []

        init() throws {
            try RedisRequirement.requireServer()
            server = try RedisServerProcess.start()
        }

        deinit {
            server.stop()
        }

        /// An HTTP cache in shared mode with memory, disk and the test's Redis under one prefix.
        private func makeCache() throws -> HTTPCache {
            let client = RedisClient(configuration: RedisConfiguration(host: "127.0.0.1", port: server.port))
            clients.append(client)
            let directory = try TemporaryDirectory(prefix: "stash-http-redis")
            directories.append(directory)
            var configuration = HTTPCache.Configuration(mode: .shared, directory: directory.path)
            configuration.remote = RedisCacheTier<HTTPCacheEntry>(
                client: client, codec: .httpCacheEntry, configuration: .init(keyPrefix: "http:"))
            return try HTTPCache(configuration: configuration)
        }

        /// Runs a test's body, then closes the caches' clients, whether the body returned or threw.
        private func closingClients(after body: () async throws -> Void) async throws {
            try await run(body) {
                for client in clients { await client.close() }
            }
        }

        private static func request(_ method: HTTPRequest.Method = .get, _ path: String = "/page") -> HTTPRequest {
            HTTPRequest(method: method, scheme: "https", authority: "example.com", path: path)
        }

        @Test func aResponseOneInstanceStoresIsAHitForAnotherAndAnUnsafeRequestRemovesItFromBoth() async throws {
            try await closingClients {
                let a = try makeCache(), b = try makeCache()
                await a.engine.store.waitUntilReceivingInvalidations()
                await b.engine.store.waitUntilReceivingInvalidations()
                let appliedByA = a.engine.store.recordAppliedInvalidations()
                let appliedByB = b.engine.store.recordAppliedInvalidations()
                let key = HTTPCacheEngine.key(for: Self.request())
                let origin = CountingOrigin()

                // Given A fetched and stored a response, when B asks for the same URL,
                // then B answers from Redis without asking the origin, with A's body.
                let first = try await a.response(for: Self.request(), origin: origin.answer)
                #expect(first.outcome == .miss)
                // (B hears of the write too; a read racing with that would rightly not keep its copy.)
                try await appliedByB.wait(for: .key(key))
                let shared = try await b.response(for: Self.request(), origin: origin.answer)
                #expect(shared.outcome == .hit)
                #expect(try await shared.body.collect(upTo: 1 << 20) == Array("version 1".utf8))
                #expect(origin.count == 1)
                // ... and keeps it in its own tiers: B's next answer needs neither Redis nor the origin.
                #expect(b.engine.memory.value(forKey: key) != nil)

                // When B forwards a POST to the URL, then the stored response leaves Redis and
                // A's memory and disk, so A's next GET reaches the origin.
                let post = try await b.response(for: Self.request(.post), origin: origin.answer)
                #expect(post.outcome == .bypass)
                try await appliedByA.wait(for: .key(key))
                let afterPost = try await a.response(for: Self.request(), origin: origin.answer)
                #expect(afterPost.outcome == .miss)
                #expect(try await afterPost.body.collect(upTo: 1 << 20) == Array("version 3".utf8))
                #expect(origin.count == 3)
                await a.close()
                await b.close()
            }
        }

        @Test func aDamagedEntryInRedisIsAMissNeverACrash() async throws {
            try await closingClients {
                let a = try makeCache(), b = try makeCache()
                let origin = CountingOrigin()
                _ = try await a.response(for: Self.request(), origin: origin.answer)
                // Given bytes past the end of the stored record (its header stays valid), when
                // another instance reads it, then the record fails to decode: a miss, served by
                // the origin and stored again, whole.
                let key = "http:" + HTTPCacheEngine.key(for: Self.request())
                _ = try server.cli(["APPEND", key, "damage"])
                #expect(try await b.response(for: Self.request(), origin: origin.answer).outcome == .miss)
                #expect(try await b.response(for: Self.request(), origin: origin.answer).outcome == .hit)
                #expect(origin.count == 2)
                await a.close()
                await b.close()
            }
        }
    }
}

/// An origin in process that answers every request with a fresh, storable `200` whose body
/// names how many requests it has answered ("version 1", "version 2", ...).
private final class CountingOrigin: Sendable {
    private let requests = LockedValue(0)

    var count: Int { requests.withLock { $0 } }

    var answer: @Sendable (HTTPRequest, HTTPCacheBody?) async throws -> (HTTPResponse, HTTPCacheBody) {
        { _, _ in
            let version = self.requests.withLock { count in
                count += 1
                return count
            }
            var response = HTTPResponse(status: .ok)
            response.headerFields[.cacheControl] = "max-age=600"
            response.headerFields[.eTag] = "\"v\(version)\""
            response.headerFields[.date] = HTTPDate.format(Int64(Date().timeIntervalSince1970))
            return (response, HTTPCacheBody(bytes: Array("version \(version)".utf8)))
        }
    }
}
#endif  // Redis
