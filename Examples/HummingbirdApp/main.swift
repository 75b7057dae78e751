#if Hummingbird && Redis
// The example app of the "Using Stash in a Hummingbird server" article (StashHummingbird's DocC catalog),
// compiled by every build of this package with its Hummingbird and Redis traits, as CI's
// `--enable-all-traits` build (it is not run in CI: it needs a redis-server):
//
//   swift run --traits Hummingbird,Redis stash-hummingbird-example     # then: curl -i http://127.0.0.1:8080/report
//
// A Hummingbird 2 app with:
// - sessions in a StashPersistDriver on memory + a Redis tier shared by the fleet;
// - an RFC 9111 response cache for its own routes (HTTPCacheMiddleware, shared mode, on disk);
// - the caches' statistics through swift-metrics (CacheMetrics);
// - graceful shutdown: every cache, the Redis tier and its client are services of the app.
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Stash
import StashHTTP
import StashHummingbird
import StashMetrics
import StashRedis

let logger = Logger(label: "example")

// Sessions: memory in front of Redis, so every server of the fleet sees every session, and a
// `create` is decided once for the whole fleet (Redis SET NX).
let redis = RedisClient(configuration: RedisConfiguration(host: "127.0.0.1", port: 6379))
let sessionTier = RedisCacheTier(client: redis, codec: .jsonRecord, configuration: .init(keyPrefix: "example:sessions:"))
let sessions = try Cache<JSONRecord>(
    memory: MemoryCache(configuration: .init(countLimit: 100_000)), disk: nil, remote: sessionTier, logger: logger)
let persist = StashPersistDriver(cache: sessions)

// The routes' responses, cached by their own Cache-Control, ETag and Vary.
let responses = try HTTPCache(configuration: .init(mode: .shared, directory: NSTemporaryDirectory() + "example-http-cache"))

let router = Router()
// keepsStoredDate and StoredDateChannelHandler (below): a stored response goes out with its own
// Date, which Hummingbird's Application would replace with the current one.
router.add(middleware: HTTPCacheMiddleware(cache: responses, keepsStoredDate: true))
router.get("/report") { _, _ -> Response in
    var headers = HTTPFields()
    headers[.cacheControl] = "max-age=60, stale-if-error=3600"
    headers[.eTag] = "\"report-v1\""
    return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: "an expensive report\n")))
}
router.post("/sessions/:id") { _, context -> HTTPResponse.Status in
    let id = try context.parameters.require("id")
    do {
        try await persist.create(key: id, value: ["user": "ada"], expires: .seconds(3600))
        return .created
    } catch let error as PersistError where error == .duplicate {
        return .conflict
    }
}
router.get("/sessions/:id") { _, context -> String in
    let id = try context.parameters.require("id")
    guard let session = try await persist.getWithTTL(key: id, as: [String: String].self) else { throw HTTPError(.notFound) }
    return "\(session.object), \(session.ttl.map { "\($0)" } ?? "no expiry") left\n"
}

/// Records both caches' statistics every 10 s through swift-metrics, until shutdown.
struct CacheMetricsService: Service {
    func run() async throws {
        let http = CacheMetrics(name: "http_responses"), sessionMetrics = CacheMetrics(name: "sessions")
        await withDiscardingTaskGroup { group in
            group.addTask { await cancelWhenGracefulShutdown { await http.run { responses.statistics } } }
            group.addTask { await cancelWhenGracefulShutdown { await sessionMetrics.run { sessions.statistics } } }
        }
    }
}

var app = Application(
    router: router,
    server: .http1(configuration: .init(additionalChannelHandlers: [StoredDateChannelHandler()])),
    configuration: .init(address: .hostname("127.0.0.1", port: 8080)),
    logger: logger)
// On SIGTERM or SIGINT the service group stops the server, then these in reverse order: the
// metrics record a last reading, the response cache and the session cache finish their background
// work (revalidations, changes on their way to Redis) and close, then the Redis tier and client.
app.addServices(redis, sessionTier, sessions, responses, CacheMetricsService())
try await app.runService()
#else
print("stash-hummingbird-example needs the Hummingbird and Redis traits: swift run --traits Hummingbird,Redis stash-hummingbird-example")
#endif
