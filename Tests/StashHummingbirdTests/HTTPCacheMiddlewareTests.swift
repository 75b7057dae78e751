#if Hummingbird
import AsyncHTTPClient
import Foundation
import Hummingbird
import HTTPTypes
import NIOCore
import Stash
import StashHTTP
import StashHummingbird
import StashTestSupport
import Testing

/// `HTTPCacheMiddleware` and `HTTPCacheResponder` in running Hummingbird apps on 127.0.0.1: each
/// test counts how often its route runs. The caches run on a manual clock: no test waits for time.
@Suite(.timeLimit(.minutes(5))) struct HTTPCacheMiddlewareTests {
    /// A shared cache on a manual clock.
    static func cache(_ clock: ManualClock) throws -> HTTPCache {
        var configuration = HTTPCache.Configuration(mode: .shared)
        configuration.clock = clock
        return try HTTPCache(configuration: configuration)
    }

    /// A router whose routes are behind the middleware, on a shared cache on `clock`.
    static func cachedRouter(_ clock: ManualClock) throws -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: HTTPCacheMiddleware(cache: try cache(clock)))
        return router
    }

    static func app(_ router: Router<BasicRequestContext>) -> some ApplicationProtocol {
        Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    }

    /// A response with `fields` and `body`.
    static func response(_ body: String, _ fields: [HTTPField.Name: String], status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        for (name, value) in fields { headers[name] = value }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    @Test func aFreshResponseIsServedWithoutRunningTheRoute() async throws {
        let clock = ManualClock(start: 1_800_000_000_000_000_000)
        let runs = LockedValue(0)
        let router = try Self.cachedRouter(clock)
        router.get("/report") { request, _ in
            let count = runs.withLock { $0 += 1; return $0 }
            return Self.response("report \(count) for \(request.uri.query ?? "")", [.cacheControl: "max-age=60"])
        }
        try await withRunningApp(Self.app(router)) { client in
            let first = try await client.execute(uri: "/report?q=1", method: .get)
            clock.advance(by: .seconds(5))
            let second = try await client.execute(uri: "/report?q=1", method: .get)
            let other = try await client.execute(uri: "/report?q=2", method: .get)

            #expect(String(buffer: first.body) == "report 1 for q=1")
            #expect(first.headers[.init("Cache-Status")!] == "Stash; fwd=uri-miss")
            #expect(String(buffer: second.body) == "report 1 for q=1")
            #expect(second.headers[.init("Cache-Status")!] == "Stash; hit")
            #expect(second.headers[.age] == "5")
            #expect(String(buffer: other.body) == "report 2 for q=2")
        }
        #expect(runs.withLock { $0 } == 2)
    }

    /// A conditional request that the stored response satisfies is a 304, without the route; a stale
    /// response is revalidated with the route, which sees the validator and may answer 304.
    @Test func conditionalRequestsAndRevalidationUseTheETag() async throws {
        let clock = ManualClock(start: 1_800_000_000_000_000_000)
        let runs = LockedValue<[String?]>([])
        let router = try Self.cachedRouter(clock)
        router.get("/doc") { request, _ in
            let condition = request.headers[.ifNoneMatch]
            runs.withLock { $0.append(condition) }
            if condition == "\"v1\"" { return Self.response("", [.eTag: "\"v1\"", .cacheControl: "max-age=10"], status: .notModified) }
            return Self.response("document", [.eTag: "\"v1\"", .cacheControl: "max-age=10"])
        }
        try await withRunningApp(Self.app(router)) { client in
            _ = try await client.execute(uri: "/doc", method: .get)
            let notModified = try await client.execute(uri: "/doc", method: .get, headers: [.ifNoneMatch: "\"v1\""])
            #expect(notModified.status == .notModified)
            #expect(notModified.body.readableBytes == 0)
            clock.advance(by: .seconds(11))
            let revalidated = try await client.execute(uri: "/doc", method: .get)
            #expect(revalidated.status == .ok)
            #expect(String(buffer: revalidated.body) == "document")
            #expect(revalidated.headers[.init("Cache-Status")!] == "Stash; fwd=stale; fwd-status=304")
        }
        #expect(runs.withLock { $0 } == [nil, "\"v1\""])
    }

    /// The same with `Last-Modified` and no `ETag`: `If-Modified-Since` is answered from the store,
    /// and a stale response is revalidated with the date.
    @Test func conditionalRequestsAndRevalidationUseLastModified() async throws {
        let clock = ManualClock(start: 1_800_000_000_000_000_000)
        let modified = "Tue, 14 Nov 2023 22:13:20 GMT"
        let runs = LockedValue<[String?]>([])
        let router = try Self.cachedRouter(clock)
        router.get("/page") { request, _ in
            let condition = request.headers[.ifModifiedSince]
            runs.withLock { $0.append(condition) }
            if condition == modified { return Self.response("", [.lastModified: modified, .cacheControl: "max-age=10"], status: .notModified) }
            return Self.response("page", [.lastModified: modified, .cacheControl: "max-age=10"])
        }
        try await withRunningApp(Self.app(router)) { client in
            _ = try await client.execute(uri: "/page", method: .get)
            let notModified = try await client.execute(uri: "/page", method: .get, headers: [.ifModifiedSince: modified])
            #expect(notModified.status == .notModified)
            #expect(notModified.body.readableBytes == 0)
            let modifiedSince = try await client.execute(uri: "/page", method: .get, headers: [.ifModifiedSince: "Mon, 13 Nov 2023 00:00:00 GMT"])
            #expect(modifiedSince.status == .ok)
            #expect(String(buffer: modifiedSince.body) == "page")
            clock.advance(by: .seconds(11))
            let revalidated = try await client.execute(uri: "/page", method: .get)
            #expect(revalidated.status == .ok)
            #expect(String(buffer: revalidated.body) == "page")
            #expect(revalidated.headers[.init("Cache-Status")!] == "Stash; fwd=stale; fwd-status=304")
        }
        #expect(runs.withLock { $0 } == [nil, modified])
    }

    /// 20 concurrent requests for one URL on separate connections run the route once.
    @Test func concurrentMissesRunTheRouteOnce() async throws {
        let clock = ManualClock(start: 1_800_000_000_000_000_000)
        let runs = LockedValue(0)
        let arrived = LockedValue(0)
        let release = AsyncStream<Void>.makeStream()
        let router = Router()
        router.add(middleware: CountingMiddleware(count: arrived))  // outermost: sees every request
        router.add(middleware: HTTPCacheMiddleware(cache: try Self.cache(clock)))
        router.get("/slow") { _, _ in
            runs.withLock { $0 += 1 }
            for await _ in release.stream {}  // held until every request has arrived
            return Self.response("slow", [.cacheControl: "max-age=60"])
        }
        try await withRunningApp(Self.app(router)) { client in
            let port = client.port
            // One connection per request (AsyncHTTPClient's default pool has 8 per host).
            var configuration = HTTPClient.Configuration()
            configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 20
            let httpClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            defer { _ = httpClient.shutdown() }
            let bodies = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        let response = try await httpClient.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/slow"), timeout: .seconds(Int64(defaultWaitTimeoutSeconds)))
                        return String(buffer: try await response.body.collect(upTo: 1 << 20))
                    }
                }
                // Every request reached the app, and one runs the route: let it answer.
                try await yield(until: { arrived.withLock { $0 } == 20 && runs.withLock { $0 } >= 1 }, onTimeout: release.continuation.finish)
                release.continuation.finish()
                var bodies: [String] = []
                for try await body in group { bodies.append(body) }
                return bodies
            }
            #expect(bodies == Array(repeating: "slow", count: 20))
        }
        #expect(runs.withLock { $0 } == 1)
    }

    /// A route that throws after its response went stale: the stored response is served within
    /// `stale-if-error`; without it, the error is the answer.
    @Test func aFailingRouteIsCoveredByStaleIfError() async throws {
        let clock = ManualClock(start: 1_800_000_000_000_000_000)
        let failing = LockedValue(false)
        let router = try Self.cachedRouter(clock)
        router.get("/data/:name") { _, context in
            if failing.withLock({ $0 }) { throw HTTPError(.serviceUnavailable) }
            let name = try context.parameters.require("name")
            return Self.response("data", [.cacheControl: name == "covered" ? "max-age=1, stale-if-error=600" : "max-age=1"])
        }
        try await withRunningApp(Self.app(router)) { client in
            _ = try await client.execute(uri: "/data/covered", method: .get)
            _ = try await client.execute(uri: "/data/bare", method: .get)
            failing.withLock { $0 = true }
            clock.advance(by: .seconds(10))
            let covered = try await client.execute(uri: "/data/covered", method: .get)
            let bare = try await client.execute(uri: "/data/bare", method: .get)
            #expect(covered.status == .ok)
            #expect(String(buffer: covered.body) == "data")
            #expect(bare.status == .serviceUnavailable)
        }
    }

    @Test func anUnsafeMethodRunsTheRouteAndInvalidatesTheURL() async throws {
        let clock = ManualClock(start: 1_800_000_000_000_000_000)
        let version = LockedValue(1)
        let router = try Self.cachedRouter(clock)
        router.get("/item") { _, _ in Self.response("v\(version.withLock { $0 })", [.cacheControl: "max-age=600"]) }
        router.put("/item") { _, _ in
            version.withLock { $0 += 1 }
            return Self.response("updated", [:])
        }
        try await withRunningApp(Self.app(router)) { client in
            let before = try await client.execute(uri: "/item", method: .get)
            let put = try await client.execute(uri: "/item", method: .put, body: ByteBuffer(string: "new"))
            let after = try await client.execute(uri: "/item", method: .get)
            #expect(String(buffer: before.body) == "v1")
            #expect(put.headers[.init("Cache-Status")!] == "Stash; fwd=bypass")
            #expect(String(buffer: after.body) == "v2")
        }
    }

    /// Hummingbird's `Application` writes the current `Date` on every response; with
    /// `keepsStoredDate` and `StoredDateChannelHandler` a stored response keeps the route's.
    @Test func aStoredResponseKeepsItsDateWithTheChannelHandler() async throws {
        let routeDate = "Fri, 15 Jan 2027 08:00:00 GMT"  // the clock's start
        let storedDate = HTTPField.Name("Stash-Stored-Date")!
        for keepsStoredDate in [true, false] {
            let clock = ManualClock(start: 1_800_000_000_000_000_000)
            let router = Router()
            router.add(middleware: HTTPCacheMiddleware(cache: try Self.cache(clock), keepsStoredDate: keepsStoredDate))
            router.get("/report") { _, _ in Self.response("report", [.cacheControl: "max-age=60", .date: routeDate]) }
            let app = Application(
                router: router,
                server: .http1(configuration: .init(additionalChannelHandlers: keepsStoredDate ? [StoredDateChannelHandler()] : [])),
                configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await withRunningApp(app) { client in
                let miss = try await client.execute(uri: "/report", method: .get)
                clock.advance(by: .seconds(5))
                let hit = try await client.execute(uri: "/report", method: .get)
                #expect(hit.headers[.init("Cache-Status")!] == "Stash; hit")
                #expect(hit.headers[.age] == "5")
                for answer in [miss, hit] {
                    #expect(answer.headers[fields: .date].count == 1)
                    #expect(answer.headers[storedDate] == nil)
                    // Without the handler, the date Hummingbird writes: the real clock's, not the route's.
                    #expect((answer.headers[.date] == routeDate) == keepsStoredDate)
                }
            }
        }
    }

    @Test func varyKeepsOneVariantPerRequestHeaderValue() async throws {
        let clock = ManualClock(start: 1_800_000_000_000_000_000)
        let runs = LockedValue(0)
        let router = try Self.cachedRouter(clock)
        router.get("/greeting") { request, _ in
            runs.withLock { $0 += 1 }
            let french = request.headers[.acceptLanguage] == "fr"
            return Self.response(french ? "bonjour" : "hello", [.cacheControl: "max-age=60", .vary: "Accept-Language"])
        }
        try await withRunningApp(Self.app(router)) { client in
            var bodies: [String] = []
            for language in ["en", "fr", "en", "fr"] {
                bodies.append(String(buffer: try await client.execute(uri: "/greeting", method: .get, headers: [.acceptLanguage: language]).body))
            }
            #expect(bodies == ["hello", "bonjour", "hello", "bonjour"])
        }
        #expect(runs.withLock { $0 } == 2)
    }

    /// Within `stale-while-revalidate`, the middleware revalidates before answering (its `next`
    /// cannot run later); `HTTPCacheResponder` serves the stale response at once and runs the
    /// route in the background.
    @Test func staleWhileRevalidateIsServedStaleByTheResponderAndRevalidatedByTheMiddleware() async throws {
        let clock = ManualClock(start: 1_800_000_000_000_000_000)
        let version = LockedValue(0)
        let route: @Sendable (Request, BasicRequestContext) async throws -> Response = { _, _ in
            let current = version.withLock { $0 += 1; return $0 }
            return Self.response("v\(current)", [.cacheControl: "max-age=1, stale-while-revalidate=600"])
        }
        // The middleware.
        let router = try Self.cachedRouter(clock)
        router.get("/swr", use: route)
        try await withRunningApp(Self.app(router)) { client in
            _ = try await client.execute(uri: "/swr", method: .get)
            clock.advance(by: .seconds(5))
            let answer = try await client.execute(uri: "/swr", method: .get)
            #expect(String(buffer: answer.body) == "v2")
        }

        // The responder.
        version.withLock { $0 = 0 }
        let cache = try Self.cache(clock)
        let plain = Router()
        plain.get("/swr", use: route)
        var app = Application(
            responder: HTTPCacheResponder(responder: plain.buildResponder(), cache: cache),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        app.addServices(cache)
        try await withRunningApp(app) { client in
            _ = try await client.execute(uri: "/swr", method: .get)
            clock.advance(by: .seconds(5))
            let stale = try await client.execute(uri: "/swr", method: .get)
            #expect(String(buffer: stale.body) == "v1")
            #expect(stale.headers[.init("Cache-Status")!] == "Stash; hit; detail=stale")
        }
        // The app shut down: the cache, a service of the app, waited for the background revalidation, then closed.
        #expect(version.withLock { $0 } == 2)
    }
}

/// Counts the requests that reach it.
struct CountingMiddleware<Context: RequestContext>: RouterMiddleware {
    let count: LockedValue<Int>

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        count.withLock { $0 += 1 }
        return try await next(request, context)
    }
}
#endif  // Hummingbird
