import HTTPTypes
import Stash
import Testing
@testable import StashHTTP

@Suite struct HTTPCacheTests {
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
}
