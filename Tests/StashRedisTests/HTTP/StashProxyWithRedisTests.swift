#if Redis && AsyncHTTPClient
import AsyncHTTPClient
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
@testable import Stash
import StashAsyncHTTPClient
import StashTestSupport
import Testing
@testable import StashHTTP
@testable import StashProxy
@testable import StashRedis

extension RedisSuites {
    /// Two stash-proxy servers started with the same `--redis`, on 127.0.0.1, in front of one
    /// origin (a third server of the same stack that answers by itself), sharing one real
    /// redis-server.
    @Suite(.requiresRedisServer, .timeLimit(.minutes(5))) final class StashProxyWithRedisTests {
        /// The test's own server, stopped at deinit (whether the test passed, failed or threw).
        private let server: RedisServerProcess

        init() throws {
            try RedisRequirement.requireServer()
            server = try RedisServerProcess.start()
        }

        deinit {
            server.stop()
        }

        @Test func proxiesGivenTheSameRedisShareResponsesAndInvalidations() async throws {
            let origin = try await RunningServer(origin: 0, responder: VersionedOrigin())
            var proxies: [RunningServer] = []
            var clients: [RedisClient] = []
            var caches: [HTTPCache] = []
            do {
                for _ in 0..<2 {
                    let command = try StashProxyCommand.parse([
                        "--origin", "http://127.0.0.1:\(origin.port)", "--redis", "127.0.0.1:\(server.port)",
                    ])
                    let logger = Logger(label: "test-proxy")
                    let client = try #require(command.makeRedisClient(logger: logger))
                    clients.append(client)
                    var configuration = HTTPCache.Configuration(mode: .shared)
                    configuration.remote = command.sharedTier(on: client, logger: logger)
                    let cache = try HTTPCache(configuration: configuration)
                    caches.append(cache)
                    await cache.engine.store.waitUntilReceivingInvalidations()
                    let responder = CachingResponder(
                        client: CachingHTTPClient(client: .shared, cache: cache), timeout: .seconds(Int64(defaultWaitTimeoutSeconds)))
                    proxies.append(try await RunningServer(origin: origin.port, responder: responder))
                }
                let appliedByFirst = caches[0].engine.store.recordAppliedInvalidations()
                let appliedBySecond = caches[1].engine.store.recordAppliedInvalidations()
                let key = "GET http://127.0.0.1:\(origin.port)/page"

                // Given the first proxy fetched the page, when the second is asked for it, then it
                // answers from Redis without the origin.
                let first = try await proxies[0].send(.GET, "/page")
                #expect(first.body == "version 1")
                #expect(first.cacheStatus.contains("fwd=uri-miss"))
                try await appliedBySecond.wait(for: .key(key))
                let shared = try await proxies[1].send(.GET, "/page")
                #expect(shared.body == "version 1")
                #expect(shared.cacheStatus == "Stash; hit")

                // When a POST to the page goes through the second proxy, then the first forgets it too.
                _ = try await proxies[1].send(.POST, "/page")
                try await appliedByFirst.wait(for: .key(key))
                let afterPost = try await proxies[0].send(.GET, "/page")
                #expect(afterPost.body == "version 3")
            } catch {
                for proxy in proxies { try? await proxy.stop() }
                try? await origin.stop()
                for client in clients { await client.close() }
                throw error
            }
            for proxy in proxies { try await proxy.stop() }
            try await origin.stop()
            for cache in caches { await cache.close() }
            for client in clients { await client.close() }
        }
    }
}

/// A server of stash-proxy's stack on 127.0.0.1 and a free port, answering with `responder`.
private final class RunningServer: Sendable {
    let port: Int
    private let task: Task<Void, any Error>

    init(origin: Int, responder: any ProxyResponder) async throws {
        let server = ProxyServer(
            host: "127.0.0.1", port: 0, originScheme: "http", originAuthority: "127.0.0.1:\(origin)",
            responder: responder, maximumRequestBodySize: 1 << 20, logger: Logger(label: "test-server"))
        (port, task) = try await server.start()
    }

    /// Sends one request and reads the whole body, within `defaultWaitTimeout`.
    func send(_ method: HTTPMethod, _ path: String) async throws -> (body: String, cacheStatus: String) {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = method
        if method == .POST { request.body = .bytes(ByteBuffer(string: "x")) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(Int64(defaultWaitTimeoutSeconds)))
        let body = try await response.body.collect(upTo: 1 << 20)
        return (String(buffer: body), response.headers["Cache-Status"].first ?? "")
    }

    func stop() async throws {
        task.cancel()
        _ = await task.result
    }
}

/// An origin that answers every request with a fresh, storable `200` whose body names how many
/// requests it has answered ("version 1", "version 2", ...).
private struct VersionedOrigin: ProxyResponder {
    let requests = LockedValue(0)

    func respond(to request: HTTPRequest, body: ByteBuffer?, writer: ProxyResponseWriter) async throws {
        let version = requests.withLock { count in
            count += 1
            return count
        }
        var response = HTTPResponse(status: .ok)
        response.headerFields[.cacheControl] = "max-age=600"
        try await writer.write(response, body: ByteBuffer(string: "version \(version)"))
    }
}
#endif  // Redis && AsyncHTTPClient
