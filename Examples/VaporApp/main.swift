#if Vapor && Redis
// The example app of StashVapor's "Using Stash in a Vapor server" article (StashVapor's DocC
// catalog), compiled by every build of this package with its Vapor and Redis traits, as CI's
// `--enable-all-traits` build (it is not run in CI: it needs a redis-server):
//
//   swift run --traits Vapor,Redis stash-vapor-example     # then: curl -i http://127.0.0.1:8080/report
//
// A Vapor 4 app with:
// - `app.cache` (and `req.cache`) on Stash: memory + a Redis tier shared by the fleet;
// - an RFC 9111 response cache for its own routes (HTTPCacheMiddleware, shared mode, on disk);
// - the caches' statistics through swift-metrics (CacheMetrics);
// - graceful shutdown: the app's lifecycle closes the caches, then the Redis client is closed.
import Foundation
import Stash
import StashHTTP
import StashMetrics
import StashRedis
import StashVapor
import Vapor

let app = try await Application.make(.detect())
app.http.server.configuration.hostname = "127.0.0.1"
app.http.server.configuration.port = 8080

// `app.cache`: memory in front of Redis, so every server of the fleet sees every value.
let redis = RedisClient(configuration: RedisConfiguration(host: "127.0.0.1", port: 6379))
let valueTier = RedisCacheTier(client: redis, codec: .jsonRecord, configuration: .init(keyPrefix: "example:values:"))
let values = try Stash.Cache<JSONRecord>(
    memory: MemoryCache(configuration: .init(countLimit: 100_000)), disk: nil, remote: valueTier, logger: app.logger)
app.caches.use(.stash(values))

// The routes' responses, cached by their own Cache-Control, ETag and Vary.
let responses = try HTTPCache(configuration: .init(mode: .shared, directory: NSTemporaryDirectory() + "example-vapor-http-cache"))
let cached = app.grouped(HTTPCacheMiddleware(cache: responses))
app.lifecycle.use(HTTPCacheLifecycleHandler(cache: responses))  // after .stash: shut down before it
cached.get("report") { _ -> Response in
    let response = Response(body: .init(string: "an expensive report\n"))
    response.headers.replaceOrAdd(name: .cacheControl, value: "max-age=60, stale-while-revalidate=30, stale-if-error=3600")
    response.headers.replaceOrAdd(name: .eTag, value: "\"report-v1\"")
    return response
}
app.put("greetings", ":name") { request async throws -> HTTPStatus in
    let name = try request.parameters.require("name")
    try await request.cache.set(name, to: try request.content.decode(String.self), expiresIn: .hours(1))
    return .noContent
}
app.get("greetings", ":name") { request async throws -> String in
    let name = try request.parameters.require("name")
    guard let greeting = try await request.cache.get(name, as: String.self) else { throw Abort(.notFound) }
    return greeting
}

// Both caches' statistics every 10 s through swift-metrics, until shutdown.
let metrics = Task {
    let http = CacheMetrics(name: "http_responses"), valueMetrics = CacheMetrics(name: "values")
    await withDiscardingTaskGroup { group in
        group.addTask { await http.run { responses.statistics } }
        group.addTask { await valueMetrics.run { values.statistics } }
    }
}

// On SIGTERM or SIGINT, execute() returns; asyncShutdown() runs the lifecycle handlers, last
// registered first: the response cache's stops the server, waits for its background
// revalidations and writes what is pending; the driver's closes `values`' disk tier (it has none
// here). Then the metrics record a last reading, and the Redis tier and client close.
do {
    try await app.execute()
} catch {
    // The server could not start (a port in use, say): shut down all the same, then report it.
    app.logger.report(error: error)
    try? await app.asyncShutdown()
    metrics.cancel()
    await closeCaches()
    throw error
}
try await app.asyncShutdown()
metrics.cancel()
await metrics.value
await closeCaches()

func closeCaches() async {
    await valueTier.close()
    await redis.close()
}
#else
print("stash-vapor-example needs the Vapor and Redis traits: swift run --traits Vapor,Redis stash-vapor-example")
#endif
