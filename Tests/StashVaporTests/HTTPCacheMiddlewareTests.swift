#if Vapor
import AsyncHTTPClient
import Foundation
import NIOCore
import Stash
import StashHTTP
import StashTestSupport
import StashVapor
import Testing
import Vapor

/// StashVapor's `HTTPCacheMiddleware` in running Vapor apps on 127.0.0.1: each test counts how
/// often its route runs. The caches run on a manual clock: no test waits for time.
@Suite(.timeLimit(.minutes(5))) struct HTTPCacheMiddlewareTests {
    /// A shared cache on a manual clock.
    static func cache(_ clock: ManualClock) throws -> HTTPCache {
        var configuration = HTTPCache.Configuration(mode: .shared)
        configuration.clock = clock
        return try HTTPCache(configuration: configuration)
    }

    /// A running app whose routes, added by `routes`, are behind the middleware, on a shared
    /// cache on `clock`.
    static func withCachedApp(
        _ clock: ManualClock, routes: @escaping (Application) throws -> Void, _ body: (RunningVaporApp) async throws -> Void
    ) async throws {
        try await withRunningApp(configure: { app in
            app.middleware.use(HTTPCacheMiddleware(cache: try Self.cache(clock)))
            try routes(app)
        }, body)
    }

    /// A response with `fields` and `body`.
    static func response(_ body: String, _ fields: [HTTPHeaders.Name: String], status: HTTPResponseStatus = .ok) -> Response {
        var headers = HTTPHeaders()
        for (name, value) in fields { headers.replaceOrAdd(name: name, value: value) }
        return Response(status: status, headers: headers, body: .init(string: body))
    }

    @Test func aFreshResponseIsServedWithoutRunningTheRoute() async throws {
        let clock = ManualClock(start: 1_800_000_000_000_000_000)
        let runs = LockedValue(0)
        try await Self.withCachedApp(clock, routes: { app in
            app.get("report") { request in
                let count = runs.withLock { $0 += 1; return $0 }
                return Self.response("report \(count) for \(request.url.query ?? "")", [.cacheControl: "max-age=60"])
            }
        }) { app in
            let first = try await app.send(.GET, "/report?q=1")
            clock.advance(by: .seconds(5))
            let second = try await app.send(.GET, "/report?q=1")
            let other = try await app.send(.GET, "/report?q=2")

            #expect(first.body == "report 1 for q=1")
            #expect(first.cacheStatus == "Stash; fwd=uri-miss")
            #expect(second.body == "report 1 for q=1")
            #expect(second.cacheStatus == "Stash; hit")
            #expect(second.headers.first(name: .age) == "5")
            #expect(other.body == "report 2 for q=2")
        }
        #expect(runs.withLock { $0 } == 2)
    }

    /// A conditional request that the stored response satisfies is a 304, without the route; a
    /// stale response is revalidated with the route, which sees the validator and answers 304.
    @Test func conditionalRequestsAndRevalidationUseTheETag() async throws {
        let clock = ManualClock(start: 1_800_000_000_000_000_000)
        let runs = LockedValue<[String?]>([])
        try await Self.withCachedApp(clock, routes: { app in
            app.get("doc") { request in
                let condition = request.headers.first(name: .ifNoneMatch)
                runs.withLock { $0.append(condition) }
                if condition == "\"v1\"" { return Self.response("", [.eTag: "\"v1\"", .cacheControl: "max-age=10"], status: .notModified) }
                return Self.response("document", [.eTag: "\"v1\"", .cacheControl: "max-age=10"])
            }
        }) { app in
            _ = try await app.send(.GET, "/doc")
            let notModified = try await app.send(.GET, "/doc", headers: ["If-None-Match": "\"v1\""])
            #expect(notModified.status == .notModified)
            #expect(notModified.body.isEmpty)
            clock.advance(by: .seconds(11))
            let revalidated = try await app.send(.GET, "/doc")
            #expect(revalidated.status == .ok)
            #expect(revalidated.body == "document")
            #expect(revalidated.cacheStatus == "Stash; fwd=stale; fwd-status=304")
        }
        #expect(runs.withLock { $0 } == [nil, "\"v1\""])
    }

    /// 20 concurrent requests for one URL on separate connections run the route once.
    /// The same with `Last-Modified` and no `ETag`: `If-Modified-Since` is answered from the store,
    /// and a stale response is revalidated with the date.
    @Test func conditionalRequestsAndRevalidationUseLastModified() async throws {
        let clock = ManualClock(start: 1_800_000_000_000_000_000)
        let modified = "Tue, 14 Nov 2023 22:13:20 GMT"
        let runs = LockedValue<[String?]>([])
        try await Self.withCachedApp(clock, routes: { app in
            app.get("page") { request in
                let condition = request.headers.first(name: .ifModifiedSince)
                runs.withLock { $0.append(condition) }
                if condition == modified { return Self.response("", [.lastModified: modified, .cacheControl: "max-age=10"], status: .notModified) }
                return Self.response("page", [.lastModified: modified, .cacheControl: "max-age=10"])
            }
        }) { app in
            _ = try await app.send(.GET, "/page")
            let notModified = try await app.send(.GET, "/page", headers: ["If-Modified-Since": modified])
            #expect(notModified.status == .notModified)
            #expect(notModified.body.isEmpty)
            let modifiedSince = try await app.send(.GET, "/page", headers: ["If-Modified-Since": "Mon, 13 Nov 2023 00:00:00 GMT"])
            #expect(modifiedSince.status == .ok)
            #expect(modifiedSince.body == "page")
            clock.advance(by: .seconds(11))
            let revalidated = try await app.send(.GET, "/page")
            #expect(revalidated.status == .ok)
            #expect(revalidated.body == "page")
            #expect(revalidated.cacheStatus == "Stash; fwd=stale; fwd-status=304")
        }
        #expect(runs.withLock { $0 } == [nil, modified])
    }

    @Test func concurrentMissesRunTheRouteOnce() async throws {
        let clock = ManualClock(start: 1_800_000_000_000_000_000)
        let runs = LockedValue(0)
        let arrived = LockedValue(0)
        let release = AsyncStream<Void>.makeStream()
        try await withRunningApp(configure: { app in
            app.middleware.use(CountingMiddleware(count: arrived))  // outermost: sees every request
            app.middleware.use(HTTPCacheMiddleware(cache: try Self.cache(clock)))
            app.get("slow") { _ async -> Response in
                runs.withLock { $0 += 1 }
                for await _ in release.stream {}  // held until every request has arrived
                return Self.response("slow", [.cacheControl: "max-age=60"])
            }
        }) { app in
            // One connection per request (AsyncHTTPClient's default pool has 8 per host).
            var configuration = HTTPClient.Configuration()
            configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 20
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            defer { _ = client.shutdown() }
            let bodies = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<20 {
                    group.addTask { try await app.send(.GET, "/slow", client: client).body }
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

    /// Within `stale-while-revalidate`, the stored response is served at once and the route runs
    /// in the background (Vapor's `next` may run after the answer), with the route's parameters
    /// and what earlier middleware put in the request's storage; `HTTPCacheLifecycleHandler` waits
    /// for it when the app shuts down.
    @Test func staleWhileRevalidateServesStaleAndRunsTheRouteInTheBackground() async throws {
        let clock = ManualClock(start: 1_800_000_000_000_000_000)
        let runs = LockedValue<[String]>([])
        try await withRunningApp(configure: { app in
            let cache = try Self.cache(clock)
            app.lifecycle.use(HTTPCacheLifecycleHandler(cache: cache))
            app.grouped(UserMiddleware()).grouped(HTTPCacheMiddleware(cache: cache)).get("swr", ":name") { request in
                let name = try request.parameters.require("name")
                let current = runs.withLock { $0.append("\(name) for \(request.storage[UserKey.self] ?? "nobody")"); return $0.count }
                return Self.response("\(name) v\(current)", [.cacheControl: "max-age=1, stale-while-revalidate=600"])
            }
        }) { app in
            _ = try await app.send(.GET, "/swr/a")
            clock.advance(by: .seconds(5))
            let stale = try await app.send(.GET, "/swr/a")
            #expect(stale.body == "a v1")
            #expect(stale.cacheStatus == "Stash; hit; detail=stale")
        }
        // The app shut down: the lifecycle handler waited for the background revalidation.
        #expect(runs.withLock { $0 } == ["a for ada", "a for ada"])
    }

    /// The route sees the cache's validators in a copy of the request: the client's request, as
    /// the middleware outside sees it, is left as it came.
    @Test func theClientsRequestIsLeftAsItCame() async throws {
        let clock = ManualClock(start: 1_800_000_000_000_000_000)
        let seen = LockedValue<[String]>([])
        try await withRunningApp(configure: { app in
            app.middleware.use(RequestHeaderRecorder(seen: seen))
            app.middleware.use(HTTPCacheMiddleware(cache: try Self.cache(clock)))
            app.get("doc") { request in
                seen.withLock { $0.append("route: \(request.headers.first(name: .ifNoneMatch) ?? "-")") }
                return Self.response("document", [.eTag: "\"v1\"", .cacheControl: "max-age=10"])
            }
        }) { app in
            _ = try await app.send(.GET, "/doc")
            clock.advance(by: .seconds(11))
            _ = try await app.send(.GET, "/doc")
        }
        #expect(seen.withLock { $0 } == ["route: -", "outside: -", "route: \"v1\"", "outside: -"])
    }

    /// A route's `Abort` with a client-error status is its answer, even within `stale-if-error`;
    /// a server error is covered.
    @Test func aClientErrorIsTheRoutesAnswerAndAServerErrorIsCovered() async throws {
        let clock = ManualClock(start: 1_800_000_000_000_000_000)
        let failure = LockedValue<HTTPResponseStatus?>(nil)
        try await Self.withCachedApp(clock, routes: { app in
            app.get("item") { _ in
                if let status = failure.withLock({ $0 }) { throw Abort(status) }
                return Self.response("item", [.cacheControl: "max-age=1, stale-if-error=600"])
            }
        }) { app in
            _ = try await app.send(.GET, "/item")
            clock.advance(by: .seconds(10))
            failure.withLock { $0 = .serviceUnavailable }
            let covered = try await app.send(.GET, "/item")
            #expect(covered.status == .ok)
            #expect(covered.body == "item")
            failure.withLock { $0 = .notFound }
            let gone = try await app.send(.GET, "/item")
            #expect(gone.status == .notFound)
            #expect(gone.cacheStatus?.hasPrefix("Stash; fwd=") == true)  // the cache's answer: the route's
        }
    }

    /// An answer from the store has one `Date` (the server's); a `HEAD` and a `304` keep the
    /// stored `Content-Length`.
    @Test func storedAnswersHaveOneDateAndTheirContentLength() async throws {
        let clock = ManualClock(start: 1_800_000_000_000_000_000)
        try await Self.withCachedApp(clock, routes: { app in
            app.get("doc") { _ in Self.response(String(repeating: "a", count: 100), [.eTag: "\"v1\"", .cacheControl: "max-age=60"]) }
        }) { app in
            _ = try await app.send(.GET, "/doc")
            let hit = try await app.send(.GET, "/doc")
            #expect(hit.headers[.date].count == 1)
            #expect(hit.headers.first(name: .contentLength) == "100")
            let notModified = try await app.send(.GET, "/doc", headers: ["If-None-Match": "\"v1\""])
            #expect(notModified.status == .notModified)
            #expect(notModified.headers[.date].count == 1)
            #expect(notModified.headers.first(name: .contentLength) != "0")
        }
    }

    /// A fresh hit larger than what is copied on the event loop is answered whole from a task.
    @Test func aLargeFreshHitIsAnsweredWhole() async throws {
        let clock = ManualClock(start: 1_800_000_000_000_000_000)
        let large = String(repeating: "abcdefgh", count: (HTTPCacheMiddleware.largestBodyAnsweredOnTheEventLoop + 8) / 8)
        try await Self.withCachedApp(clock, routes: { app in
            app.get("large") { _ in Self.response(large, [.cacheControl: "max-age=60"]) }
        }) { app in
            _ = try await app.send(.GET, "/large")
            let hit = try await app.send(.GET, "/large")
            #expect(hit.cacheStatus == "Stash; hit")
            #expect(hit.body == large)
        }
    }

    /// A request that upgrades the connection goes to the route without the cache.
    @Test func anUpgradeRequestBypassesTheCache() async throws {
        let clock = ManualClock(start: 1_800_000_000_000_000_000)
        let runs = LockedValue(0)
        try await Self.withCachedApp(clock, routes: { app in
            app.get("socket") { _ in
                runs.withLock { $0 += 1 }
                return Self.response("no upgrade here", [.cacheControl: "max-age=60"])
            }
        }) { app in
            for _ in 0..<2 {
                let answer = try await app.send(.GET, "/socket", headers: ["Upgrade": "example/1"])
                #expect(answer.cacheStatus == nil)
            }
        }
        #expect(runs.withLock { $0 } == 2)
    }

    /// A route that throws after its response went stale: the stored response is served within
    /// `stale-if-error`; without it, the error is the answer.
    @Test func aFailingRouteIsCoveredByStaleIfError() async throws {
        let clock = ManualClock(start: 1_800_000_000_000_000_000)
        let failing = LockedValue(false)
        try await Self.withCachedApp(clock, routes: { app in
            app.get("data", ":name") { request in
                if failing.withLock({ $0 }) { throw Abort(.serviceUnavailable) }
                let name = try request.parameters.require("name")
                return Self.response("data", [.cacheControl: name == "covered" ? "max-age=1, stale-if-error=600" : "max-age=1"])
            }
        }) { app in
            _ = try await app.send(.GET, "/data/covered")
            _ = try await app.send(.GET, "/data/bare")
            failing.withLock { $0 = true }
            clock.advance(by: .seconds(10))
            let covered = try await app.send(.GET, "/data/covered")
            let bare = try await app.send(.GET, "/data/bare")
            #expect(covered.status == .ok)
            #expect(covered.body == "data")
            #expect(bare.status == .serviceUnavailable)
        }
    }

    @Test func anUnsafeMethodRunsTheRouteWithItsBodyAndInvalidatesTheURL() async throws {
        let clock = ManualClock(start: 1_800_000_000_000_000_000)
        let version = LockedValue("v1")
        try await Self.withCachedApp(clock, routes: { app in
            app.get("item") { _ in Self.response(version.withLock { $0 }, [.cacheControl: "max-age=600"]) }
            app.put("item") { request in
                let body = request.body.string ?? ""
                version.withLock { $0 = body }
                return Self.response("updated", [:])
            }
        }) { app in
            let before = try await app.send(.GET, "/item")
            let put = try await app.send(.PUT, "/item", body: "v2")
            let after = try await app.send(.GET, "/item")
            #expect(before.body == "v1")
            #expect(put.cacheStatus == "Stash; fwd=bypass")
            #expect(after.body == "v2")
        }
    }

    @Test func varyKeepsOneVariantPerRequestHeaderValue() async throws {
        let clock = ManualClock(start: 1_800_000_000_000_000_000)
        let runs = LockedValue(0)
        try await Self.withCachedApp(clock, routes: { app in
            app.get("greeting") { request in
                runs.withLock { $0 += 1 }
                let french = request.headers.first(name: .acceptLanguage) == "fr"
                return Self.response(french ? "bonjour" : "hello", [.cacheControl: "max-age=60", .vary: "Accept-Language"])
            }
        }) { app in
            var bodies: [String] = []
            for language in ["en", "fr", "en", "fr"] {
                bodies.append(try await app.send(.GET, "/greeting", headers: ["Accept-Language": language]).body)
            }
            #expect(bodies == ["hello", "bonjour", "hello", "bonjour"])
        }
        #expect(runs.withLock { $0 } == 2)
    }

    /// A streamed body (Vapor's `asyncStream`) is collected, stored and served whole.
    @Test func aStreamedBodyIsStoredAndServed() async throws {
        let clock = ManualClock(start: 1_800_000_000_000_000_000)
        let runs = LockedValue(0)
        try await Self.withCachedApp(clock, routes: { app in
            app.get("stream") { _ -> Response in
                runs.withLock { $0 += 1 }
                let response = Response(body: .init(managedAsyncStream: { writer in
                    for chunk in ["one ", "two ", "three"] { try await writer.writeBuffer(ByteBuffer(string: chunk)) }
                }))
                response.headers.replaceOrAdd(name: .cacheControl, value: "max-age=60")
                return response
            }
        }) { app in
            #expect(try await app.send(.GET, "/stream").body == "one two three")
            let hit = try await app.send(.GET, "/stream")
            #expect(hit.body == "one two three")
            #expect(hit.cacheStatus == "Stash; hit")
        }
        #expect(runs.withLock { $0 } == 1)
    }
}

/// What the tests' "authentication" middleware puts in a request's storage.
struct UserKey: StorageKey {
    typealias Value = String
}

/// Puts a user in every request's storage, as an authentication middleware would.
struct UserMiddleware: AsyncMiddleware {
    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        request.storage[UserKey.self] = "ada"
        return try await next.respond(to: request)
    }
}

/// Records the client's `If-None-Match` as the middleware outside the cache sees it, after the
/// answer.
struct RequestHeaderRecorder: AsyncMiddleware {
    let seen: LockedValue<[String]>

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let response = try await next.respond(to: request)
        seen.withLock { $0.append("outside: \(request.headers.first(name: .ifNoneMatch) ?? "-")") }
        return response
    }
}

/// Counts the requests that reach it.
struct CountingMiddleware: AsyncMiddleware {
    let count: LockedValue<Int>

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        count.withLock { $0 += 1 }
        return try await next.respond(to: request)
    }
}
#endif  // Vapor
