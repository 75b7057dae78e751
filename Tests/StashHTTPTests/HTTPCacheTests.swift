import HTTPTypes
import Stash
import Testing
@testable import StashHTTP

@Suite(.timeLimit(.minutes(5))) struct HTTPCacheTests {
    @Test func freshResponseIsServedWithoutTheOrigin() async throws {
        let clock = makeClock()
        let cache = try makeCache(clock: clock)
        let origin = TestOrigin(200, [("Cache-Control", "max-age=60"), ("Date", httpDate(clock))])
        let (first, firstBody) = try await cache.get(makeRequest(), origin)
        #expect(first.outcome == .miss)
        #expect(firstBody == "hello")
        clock.advance(by: .seconds(10))
        let (second, secondBody) = try await cache.get(makeRequest(), origin)
        #expect(second.outcome == .hit)
        #expect(secondBody == "hello")
        #expect(second.response.headerFields[.age] == "10")
        #expect(origin.count == 1)
    }

    /// The synchronous path for adapters on an event loop answers exactly the fresh responses in
    /// memory (and their 304s), as the full path would; anything else is left to the full path.
    @Test func aFreshResponseInMemoryIsAnsweredWithoutSuspending() async throws {
        let clock = makeClock()
        let cache = try makeCache(clock: clock)
        let origin = TestOrigin(200, [("Cache-Control", "max-age=60"), ("ETag", "\"v1\""), ("Vary", "Accept-Language"), ("Date", httpDate(clock))])
        let english = makeRequest("/resource", [("Accept-Language", "en")])
        #expect(cache.freshResponseWithCacheStatus(for: english) == nil)  // nothing stored yet
        _ = try await cache.get(english, origin)
        clock.advance(by: .seconds(10))
        let hit = try #require(cache.freshResponseWithCacheStatus(for: english))
        #expect(hit.outcome == .hit)
        #expect(hit.response.headerFields[.age] == "10")
        #expect(hit.response.headerFields[.cacheStatus] == "Stash; hit")
        #expect(hit.body.bufferedBytes == Array("hello".utf8))
        let conditional = try #require(cache.freshResponseWithCacheStatus(for: makeRequest("/resource", [("Accept-Language", "en"), ("If-None-Match", "\"v1\"")])))
        #expect(conditional.response.status == .notModified)
        #expect(cache.freshResponseWithCacheStatus(for: makeRequest("/resource", [("Accept-Language", "fr")])) == nil)  // another variant
        #expect(cache.freshResponseWithCacheStatus(for: makeRequest("/resource", method: .post, [("Accept-Language", "en")])) == nil)
        // Request directives that send the full path to the origin.
        for fields in [[("Cache-Control", "no-cache")], [("Pragma", "no-cache")], [("Cache-Control", "max-age=5")],
                       [("Cache-Control", "min-fresh=55")]] {
            #expect(cache.freshResponseWithCacheStatus(for: makeRequest("/resource", [("Accept-Language", "en")] + fields)) == nil)
        }
        // A range of the fresh response is answered too, as the full path answers it.
        let part = try #require(cache.freshResponseWithCacheStatus(for: makeRequest("/resource", [("Accept-Language", "en"), ("Range", "bytes=0-1")])))
        #expect(part.response.status == .partialContent)
        #expect(part.body.bufferedBytes == Array("he".utf8))
        clock.advance(by: .seconds(51))
        #expect(cache.freshResponseWithCacheStatus(for: english) == nil)  // stale: the full path revalidates
        #expect(cache.statistics.hits == 3)
    }

    @Test func staleResponseIsRevalidatedWithItsETag() async throws {
        let clock = makeClock()
        let cache = try makeCache(clock: clock)
        let origin = TestOrigin(200, [("Cache-Control", "max-age=60"), ("ETag", "\"v1\""), ("Date", httpDate(clock))])
        _ = try await cache.get(makeRequest(), origin)
        clock.advance(by: .seconds(61))
        origin.respond(304, [("Cache-Control", "max-age=120"), ("Date", httpDate(clock)), ("X-New", "1")], body: "")
        let (result, body) = try await cache.get(makeRequest(), origin)
        #expect(result.outcome == .revalidated)
        #expect(body == "hello")
        #expect(result.response.headerFields[HTTPField.Name("X-New")!] == "1")
        #expect(origin.requests.last?.headerFields[.ifNoneMatch] == "\"v1\"")
        clock.advance(by: .seconds(100))
        let (again, _) = try await cache.get(makeRequest(), origin)
        #expect(again.outcome == .hit)
        #expect(origin.count == 2)
    }

    @Test func statisticsCountEachResponseByWhetherTheOriginWasAsked() async throws {
        let clock = makeClock()
        let cache = try makeCache(clock: clock)
        let origin = TestOrigin(200, [("Cache-Control", "max-age=60"), ("ETag", "\"v1\""), ("Date", httpDate(clock))])
        #expect(try await cache.get(makeRequest(), origin).0.outcome == .miss)
        #expect(try await cache.get(makeRequest(), origin).0.outcome == .hit)
        clock.advance(by: .seconds(61))
        // The client accepts a stale response.
        #expect(try await cache.get(makeRequest("/resource", [("Cache-Control", "max-stale=10")]), origin).0.outcome == .stale)
        origin.respond(304, [("Cache-Control", "max-age=60"), ("Date", httpDate(clock))], body: "")
        #expect(try await cache.get(makeRequest(), origin).0.outcome == .revalidated)
        #expect(try await cache.get(makeRequest(method: .post), origin).0.outcome == .bypass)
        let statistics = cache.statistics
        #expect(statistics.hits == 2)  // the hit and the stale response
        #expect(statistics.misses == 2)  // the miss and the revalidation
        #expect(statistics.staleValuesServed == 1)
        #expect(statistics.evictions == 0)
    }

    @Test func aStoredGETResponseAnswersAHEADWithoutItsBody() async throws {
        let clock = makeClock()
        let cache = try makeCache(clock: clock)
        let origin = TestOrigin(200, [("Cache-Control", "max-age=60"), ("Content-Length", "5"), ("Date", httpDate(clock))])
        _ = try await cache.get(makeRequest(), origin)
        clock.advance(by: .seconds(10))
        let (head, body) = try await cache.get(makeRequest(method: .head), origin)
        #expect(head.outcome == .hit)
        #expect(head.response.status == .ok)
        #expect(head.response.headerFields[.contentLength] == "5")
        #expect(head.response.headerFields[.age] == "10")
        #expect(body.isEmpty)
        #expect(origin.count == 1)
    }

    @Test func aHEADThatReachesTheOriginUpdatesTheStoredGETItAgreesWith() async throws {
        let clock = makeClock()
        let cache = try makeCache(clock: clock)
        let origin = TestOrigin(200, [("Cache-Control", "max-age=10"), ("ETag", "\"v1\""), ("Date", httpDate(clock))])
        _ = try await cache.get(makeRequest(), origin)
        clock.advance(by: .seconds(20))
        // Without freshness or validators this HEAD response is not worth storing, but updates.
        origin.respond(200, [("Date", httpDate(clock)), ("X-New", "1")], body: "")
        let (head, _) = try await cache.get(makeRequest(method: .head), origin)
        let (get, body) = try await cache.get(makeRequest(), origin)
        #expect(head.outcome == .miss)
        // The stored field the HEAD response did not repeat answers it too.
        #expect(head.response.headerFields[.eTag] == "\"v1\"")
        #expect(head.response.headerFields[HTTPField.Name("X-New")!] == "1")
        #expect(origin.requests.last?.method == .head)
        #expect(get.outcome == .hit)
        #expect(get.response.headerFields[HTTPField.Name("X-New")!] == "1")
        #expect(body == "hello")
        #expect(origin.count == 2)
    }

    @Test func aHEADWithAnotherETagRemovesTheStoredGET() async throws {
        let clock = makeClock()
        let cache = try makeCache(clock: clock)
        let origin = TestOrigin(200, [("Cache-Control", "max-age=10"), ("ETag", "\"v1\""), ("Date", httpDate(clock))])
        _ = try await cache.get(makeRequest(), origin)
        clock.advance(by: .seconds(20))
        origin.respond(200, [("Cache-Control", "max-age=600"), ("ETag", "\"v2\""), ("Date", httpDate(clock))], body: "")
        _ = try await cache.get(makeRequest(method: .head), origin)
        origin.respond(200, [("Cache-Control", "max-age=600"), ("ETag", "\"v2\""), ("Date", httpDate(clock))], body: "new")
        let (get, body) = try await cache.get(makeRequest(), origin)
        #expect(get.outcome == .miss)
        #expect(body == "new")
        #expect(origin.requests.map(\.method) == [.get, .head, .get])
        #expect(origin.requests.last?.headerFields[.ifNoneMatch] == nil)
    }
}
