import Foundation
import HTTPTypes
import Stash
import StashTestSupport
import Testing
@testable import StashHTTP

@Suite(.timeLimit(.minutes(5))) struct HTTPCacheStoreTests {
    let fresh = [("Cache-Control", "max-age=60")]

    /// A setting out of range is clamped to the nearest valid value and warned of, never refused,
    /// as by every cache of Stash (issue #27: HTTPCache threw `.invalidArgument`).
    @Test func settingsOutOfRangeAreClampedWithAWarning() async throws {
        let logs = LogRecorder()
        var configuration = HTTPCache.Configuration()
        configuration.memoryCostLimit = -1
        configuration.memoryCountLimit = -2
        configuration.maximumEntrySize = -3
        configuration.maximumHeaderSize = -4
        configuration.maximumVariantsPerURL = 0
        configuration.heuristicFreshnessLimit = .seconds(-5)
        configuration.staleIfUnreachable = .seconds(-6)
        configuration.logger = logs.logger
        let cache = try HTTPCache(configuration: configuration)
        let used = cache.configuration
        #expect(used.memoryCostLimit == 0 && used.memoryCountLimit == 0)
        #expect(used.maximumEntrySize == 0 && used.maximumHeaderSize == 0)
        #expect(used.maximumVariantsPerURL == 1)
        #expect(used.heuristicFreshnessLimit == .zero && used.staleIfUnreachable == .zero)
        #expect(logs.messages(at: .warning).count == 7, "one warning per value: \(logs.messages(at: .warning))")
        // Memory stores nothing, so every request reaches the origin, and nothing fails.
        let origin = TestOrigin { _ in (makeResponse(200, [("Cache-Control", "max-age=60")]), HTTPCacheBody(bytes: [1])) }
        _ = try await cache.get(makeRequest("/a"), origin)
        #expect(try await cache.get(makeRequest("/a"), origin).0.outcome == .miss)
        #expect(origin.count == 2)
    }

    /// More variants per URL than a stored record holds would be written and then read back as
    /// damaged (and deleted): the setting is clamped to the record's limit instead.
    @Test func moreVariantsPerURLThanARecordHoldsAreClampedWithAWarning() async throws {
        let logs = LogRecorder()
        var configuration = HTTPCache.Configuration()
        configuration.maximumVariantsPerURL = HTTPCacheEntry.maximumVariants + 1
        configuration.logger = logs.logger
        let cache = try HTTPCache(configuration: configuration)
        #expect(cache.configuration.maximumVariantsPerURL == HTTPCacheEntry.maximumVariants)
        #expect(logs.messages(at: .warning).count == 1)
        await cache.close()
    }

    @Test func queryAndMethodAreInTheKey() async throws {
        let clock = makeClock()
        let cache = try makeCache(clock: clock)
        let origin = TestOrigin { request in
            (makeResponse(200, [("Cache-Control", "max-age=60")]), HTTPCacheBody(bytes: Array((request.path ?? "").utf8)))
        }
        #expect(try await cache.get(makeRequest("/a?x=1"), origin).1 == "/a?x=1")
        #expect(try await cache.get(makeRequest("/a?x=2"), origin).1 == "/a?x=2")
        #expect(try await cache.get(makeRequest("/a?x=1"), origin).0.outcome == .hit)
        // A stored GET response answers a HEAD (RFC 9111 §4); a stored HEAD response never answers a GET.
        #expect(try await cache.get(makeRequest("/a?x=1", method: .head), origin).0.outcome == .hit)
        #expect(try await cache.get(makeRequest("/b", method: .head), origin).0.outcome == .miss)
        #expect(try await cache.get(makeRequest("/b"), origin).0.outcome == .miss)
        #expect(try await cache.get(makeRequest("/a?x=1", authority: "EXAMPLE.com:443"), origin).0.outcome == .hit)
        #expect(origin.count == 4)
    }

    @Test func dateIsNeverRewrittenAndAgeIsAdded() async throws {
        let clock = makeClock()
        let cache = try makeCache(clock: clock)
        let sent = httpDate(clock, -5)
        let origin = TestOrigin(200, [("Cache-Control", "max-age=60"), ("Date", sent), ("Age", "3")])
        _ = try await cache.get(makeRequest(), origin)
        clock.advance(by: .seconds(10))
        let (hit, _) = try await cache.get(makeRequest(), origin)
        #expect(hit.response.headerFields[.date] == sent)
        #expect(hit.response.headerFields[values: .age] == ["15"])
    }

    @Test func varyKeepsSeveralVariants() async throws {
        let clock = makeClock()
        let cache = try makeCache(clock: clock)
        let origin = TestOrigin { request in
            let language = request.headerFields[.acceptLanguage] ?? "none"
            return (makeResponse(200, [("Cache-Control", "max-age=60"), ("Vary", "Accept-Language")]), HTTPCacheBody(bytes: Array(language.utf8)))
        }
        let english = makeRequest("/", [("Accept-Language", "en")])
        let french = makeRequest("/", [("Accept-Language", "fr")])
        #expect(try await cache.get(english, origin).1 == "en")
        #expect(try await cache.get(french, origin).1 == "fr")
        #expect(try await cache.get(makeRequest("/"), origin).1 == "none")
        let (englishAgain, englishBody) = try await cache.get(makeRequest("/", [("Accept-Language", "EN")]), origin)
        #expect(englishAgain.outcome == .hit)
        #expect(englishBody == "en")
        #expect(try await cache.get(french, origin).0.outcome == .hit)
        #expect(origin.count == 3)
    }

    @Test func varyStarIsNeverServed() async throws {
        let cache = try makeCache(clock: makeClock())
        let origin = TestOrigin(200, [("Cache-Control", "max-age=60"), ("Vary", "*")])
        _ = try await cache.get(makeRequest(), origin)
        #expect(try await cache.get(makeRequest(), origin).0.outcome == .miss)
        #expect(origin.count == 2)
    }

    @Test func unsafeMethodsInvalidateTheURLAndSameOriginLocations() async throws {
        let clock = makeClock()
        let cache = try makeCache(clock: clock)
        let origin = TestOrigin(200, fresh)
        for path in ["/a", "/b", "/c", "/d"] { _ = try await cache.get(makeRequest(path), origin) }
        origin.respond(201, [("Location", "https://example.com/b"), ("Content-Location", "/c")])
        let (post, _) = try await cache.get(makeRequest("/a", method: .post), origin)
        #expect(post.outcome == .bypass)
        origin.respond(200, fresh)
        #expect(try await cache.get(makeRequest("/a"), origin).0.outcome == .miss)
        #expect(try await cache.get(makeRequest("/b"), origin).0.outcome == .miss)
        #expect(try await cache.get(makeRequest("/c"), origin).0.outcome == .miss)
        #expect(try await cache.get(makeRequest("/d"), origin).0.outcome == .hit)
        // An error response invalidates nothing.
        origin.respond(500, [])
        _ = try await cache.get(makeRequest("/d", method: HTTPRequest.Method("M-SEARCH")!), origin)
        #expect(try await cache.get(makeRequest("/d"), origin).0.outcome == .hit)
        origin.respond(204, [])
        _ = try await cache.get(makeRequest("/d", method: HTTPRequest.Method("M-SEARCH")!), origin)
        origin.respond(200, fresh)
        #expect(try await cache.get(makeRequest("/d"), origin).0.outcome == .miss)
    }

    @Test func perRequestPolicies() async throws {
        let clock = makeClock()
        let cache = try makeCache(clock: clock)
        let origin = TestOrigin(200, [("Cache-Control", "max-age=60"), ("ETag", "\"1\"")])
        // A miss under returnStoredDontLoad is a 504, without the origin.
        let (dontLoad, _) = try await cache.get(makeRequest(), policy: .returnStoredDontLoad, origin)
        #expect(dontLoad.response.status == .gatewayTimeout)
        #expect(dontLoad.outcome == .miss)
        #expect(origin.count == 0)
        // noStore neither reads nor writes.
        #expect(try await cache.get(makeRequest(), policy: .noStore, origin).0.outcome == .bypass)
        #expect(try await cache.get(makeRequest(), policy: .returnStoredDontLoad, origin).0.response.status == .gatewayTimeout)
        _ = try await cache.get(makeRequest(), origin)
        // reload fetches unconditionally, revalidate conditionally.
        #expect(try await cache.get(makeRequest(), policy: .reload, origin).0.outcome == .miss)
        #expect(origin.requests.last?.headerFields[.ifNoneMatch] == nil)
        origin.respond(304, [])
        #expect(try await cache.get(makeRequest(), policy: .revalidate, origin).0.outcome == .revalidated)
        #expect(origin.requests.last?.headerFields[.ifNoneMatch] == "\"1\"")
        // Stale: the "return stored" policies serve it anyway.
        clock.advance(by: .seconds(3600))
        let count = origin.count
        #expect(try await cache.get(makeRequest(), policy: .returnStoredElseLoad, origin).0.outcome == .stale)
        #expect(try await cache.get(makeRequest(), policy: .returnStoredDontLoad, origin).0.outcome == .stale)
        #expect(origin.count == count)
    }

    @Test func onlyIfCachedMissIs504() async throws {
        let clock = makeClock()
        let cache = try makeCache(clock: clock)
        let origin = TestOrigin(200, fresh)
        let request = makeRequest("/", [("Cache-Control", "only-if-cached")])
        #expect(try await cache.get(request, origin).0.response.status.code == 504)
        _ = try await cache.get(makeRequest("/"), origin)
        #expect(try await cache.get(request, origin).0.outcome == .hit)
        clock.advance(by: .seconds(61))
        #expect(try await cache.get(request, origin).0.response.status.code == 504)
        #expect(origin.count == 1)
    }

    @Test func clientConditionalIsAnswered304FromTheStore() async throws {
        let cache = try makeCache(clock: makeClock())
        let origin = TestOrigin(200, [("Cache-Control", "max-age=60"), ("ETag", "\"abc\""), ("Content-Type", "text/plain")])
        let conditional = makeRequest("/", [("If-None-Match", "W/\"abc\"")])
        // On a miss the cache fetches unconditionally, stores, then answers the condition.
        let (first, body) = try await cache.get(conditional, origin)
        #expect(first.response.status == .notModified)
        #expect(body.isEmpty)
        #expect(origin.requests[0].headerFields[.ifNoneMatch] == nil)
        let (second, _) = try await cache.get(conditional, origin)
        #expect(second.response.status == .notModified)
        #expect(second.response.headerFields[.eTag] == "\"abc\"")
        #expect(second.response.headerFields[.contentType] == nil)
        #expect(second.outcome == .hit)
    }

    @Test func privateAndSharedModes() async throws {
        let origin = TestOrigin(200, [("Cache-Control", "max-age=60, private")])
        let shared = try makeCache(mode: .shared, clock: makeClock())
        _ = try await shared.get(makeRequest(), origin)
        #expect(try await shared.get(makeRequest(), origin).0.outcome == .miss)
        let `private` = try makeCache(mode: .private, clock: makeClock())
        _ = try await `private`.get(makeRequest(), origin)
        #expect(try await `private`.get(makeRequest(), origin).0.outcome == .hit)
    }

    @Test func cacheStatusWhenAsked() async throws {
        let cache = try makeCache(clock: makeClock()) { $0.addsCacheStatus = true }
        let origin = TestOrigin(200, fresh)
        #expect(try await cache.get(makeRequest(), origin).0.response.headerFields[HTTPField.Name("Cache-Status")!] == "Stash; fwd=uri-miss")
        #expect(try await cache.get(makeRequest(), origin).0.response.headerFields[HTTPField.Name("Cache-Status")!] == "Stash; hit")
    }

    // MARK: Stale

    @Test func staleWhileRevalidateServesThenRevalidatesOnce() async throws {
        let clock = makeClock()
        let cache = try makeCache(clock: clock)
        let origin = TestOrigin(200, [("Cache-Control", "max-age=10, stale-while-revalidate=100"), ("ETag", "\"1\"")], body: "old")
        _ = try await cache.get(makeRequest(), origin)
        clock.advance(by: .seconds(20))
        origin.respond(200, [("Cache-Control", "max-age=10, stale-while-revalidate=100")], body: "new")
        let (stale, body) = try await cache.get(makeRequest(), origin)
        #expect(stale.outcome == .stale)
        #expect(body == "old")
        await cache.engine.waitForBackgroundRevalidations()
        #expect(origin.count == 2)
        #expect(origin.requests[1].headerFields[.ifNoneMatch] == "\"1\"")
        let (hit, newBody) = try await cache.get(makeRequest(), origin)
        #expect(hit.outcome == .hit)
        #expect(newBody == "new")
        // Past the window: revalidated in the foreground.
        clock.advance(by: .seconds(200))
        #expect(try await cache.get(makeRequest(), origin).0.outcome == .miss)
    }

    /// The async `close()` lets a background revalidation finish and store before the disk closes.
    @Test func closeWaitsForABackgroundRevalidation() async throws {
        let folder = try TemporaryDirectory(prefix: "stash-http")
        let clock = makeClock()
        let origin = TestOrigin(200, [("Cache-Control", "max-age=10, stale-while-revalidate=100")], body: "old")
        let cache = try makeCache(clock: clock, directory: folder.path)
        _ = try await cache.get(makeRequest(), origin)
        clock.advance(by: .seconds(20))
        // The revalidation's origin answers once the test lets it (a one-shot gate).
        let (gate, opener) = AsyncStream<Void>.makeStream()
        let held: @Sendable (HTTPRequest, HTTPCacheBody?) async throws -> (HTTPResponse, HTTPCacheBody) = { _, _ in
            for await _ in gate {}
            return (makeResponse(200, [("Cache-Control", "max-age=1000")]), HTTPCacheBody(bytes: Array("new".utf8)))
        }
        #expect(try await cache.response(for: makeRequest(), origin: held).outcome == .stale)
        let closing = Task { await cache.close() }
        opener.finish()
        await closing.value
        // Closed only after the revalidation stored "new", on disk too: a new cache reads it.
        let reopened = try makeCache(clock: clock, directory: folder.path)
        let (hit, body) = try await reopened.get(makeRequest(), origin)
        #expect(hit.outcome == .hit)
        #expect(body == "new")
        await reopened.close()
    }

    @Test func staleIfErrorServesStaleWhenTheOriginFails() async throws {
        let clock = makeClock()
        let cache = try makeCache(clock: clock)
        let origin = TestOrigin(200, [("Cache-Control", "max-age=10, stale-if-error=100")])
        _ = try await cache.get(makeRequest(), origin)
        clock.advance(by: .seconds(20))
        origin.respond { _ in throw OriginDown() }
        #expect(try await cache.get(makeRequest(), origin).0.outcome == .stale)
        origin.respond(503, [])
        let (stale, body) = try await cache.get(makeRequest(), origin)
        #expect(stale.outcome == .stale)
        #expect(stale.response.status == .ok)
        #expect(body == "hello")
        clock.advance(by: .seconds(200))
        origin.respond { _ in throw OriginDown() }
        await #expect(throws: OriginDown.self) { try await cache.get(makeRequest(), origin) }
    }

    @Test func aNewBodyFailingDuringRevalidationServesStaleIfErrorAndKeepsTheStoredResponse() async throws {
        let clock = makeClock()
        let cache = try makeCache(clock: clock)
        let origin = TestOrigin(200, [("Cache-Control", "max-age=10, stale-if-error=100"), ("ETag", "\"v1\"")])
        _ = try await cache.get(makeRequest(), origin)
        clock.advance(by: .seconds(20))
        origin.respond { _ in
            let stream = AsyncThrowingStream<ArraySlice<UInt8>, any Error> { continuation in
                continuation.yield([1, 2, 3][...])
                continuation.finish(throwing: OriginDown())
            }
            return (makeResponse(200, [("Cache-Control", "max-age=10"), ("ETag", "\"v2\"")]), HTTPCacheBody(stream))
        }
        let (stale, body) = try await cache.get(makeRequest(), origin)
        #expect(stale.outcome == .stale)
        #expect(body == "hello")
        clock.advance(by: .seconds(200))
        await #expect(throws: OriginDown.self) { try await cache.get(makeRequest(), origin) }
        origin.respond(304, [("ETag", "\"v1\"")])
        let (revalidated, stored) = try await cache.get(makeRequest(), origin)
        #expect(revalidated.outcome == .revalidated)
        #expect(stored == "hello")
        #expect(origin.requests.last?.headerFields[.ifNoneMatch] == "\"v1\"")
    }

    @Test func staleIfUnreachableServesStaleOnlyWhenTheOriginCannotBeReached() async throws {
        let clock = makeClock()
        let cache = try makeCache(clock: clock) { $0.staleIfUnreachable = .seconds(100) }
        let origin = TestOrigin(200, [("Cache-Control", "max-age=10")])
        _ = try await cache.get(makeRequest(), origin)
        clock.advance(by: .seconds(20))
        origin.respond { _ in throw OriginDown() }
        let (stale, body) = try await cache.get(makeRequest(), origin)
        #expect(stale.outcome == .stale)
        #expect(body == "hello")
        // An error status is an answer, not an unreachable origin.
        origin.respond(503, [])
        #expect(try await cache.get(makeRequest(), origin).0.response.status.code == 503)
        clock.advance(by: .seconds(200))
        origin.respond { _ in throw OriginDown() }
        await #expect(throws: OriginDown.self) { try await cache.get(makeRequest(), origin) }
    }

    @Test func staleIfUnreachableNeverServesWhatForbidsStale() async throws {
        let clock = makeClock()
        let cache = try makeCache(clock: clock) { $0.staleIfUnreachable = .seconds(100) }
        for (path, cacheControl) in [("/mr", "max-age=10, must-revalidate"), ("/nc", "max-age=10, no-cache"), ("/pr", "max-age=10, proxy-revalidate"), ("/sm", "s-maxage=10")] {
            let origin = TestOrigin(200, [("Cache-Control", cacheControl), ("ETag", "\"e\"")])
            _ = try await cache.get(makeRequest(path), origin)
            clock.advance(by: .seconds(20))
            origin.respond { _ in throw OriginDown() }
            await #expect(throws: OriginDown.self, "\(cacheControl)") { try await cache.get(makeRequest(path), origin) }
        }
    }

    @Test func mustRevalidateRethrowsTheOriginsError() async throws {
        let clock = makeClock()
        let cache = try makeCache(clock: clock)
        let origin = TestOrigin(200, [("Cache-Control", "max-age=10, must-revalidate, stale-if-error=100")])
        _ = try await cache.get(makeRequest(), origin)
        clock.advance(by: .seconds(20))
        origin.respond { _ in throw OriginDown() }
        await #expect(throws: OriginDown.self) { try await cache.get(makeRequest(), origin) }
        origin.respond(503, [])
        #expect(try await cache.get(makeRequest(), origin).0.response.status.code == 503)
    }

    // MARK: Bodies and limits

    @Test func aBodyCutMidWayStoresNothing() async throws {
        let cache = try makeCache(clock: makeClock())
        let origin = TestOrigin { _ in
            let stream = AsyncThrowingStream<ArraySlice<UInt8>, any Error> { continuation in
                continuation.yield([1, 2, 3][...])
                continuation.finish(throwing: OriginDown())
            }
            return (makeResponse(200, [("Cache-Control", "max-age=60")]), HTTPCacheBody(stream))
        }
        await #expect(throws: OriginDown.self) { try await cache.get(makeRequest(), origin) }
        origin.respond(200, [("Cache-Control", "max-age=60")])
        #expect(try await cache.get(makeRequest(), origin).0.outcome == .miss)
        #expect(origin.count == 2)
    }

    @Test func aWrongContentLengthStoresNothing() async throws {
        let cache = try makeCache(clock: makeClock())
        let origin = TestOrigin(200, [("Cache-Control", "max-age=60"), ("Content-Length", "10")], body: "short")
        #expect(try await cache.get(makeRequest(), origin).1 == "short")
        #expect(try await cache.get(makeRequest(), origin).0.outcome == .miss)
    }

    @Test func largeBodiesStreamThroughUnstored() async throws {
        let cache = try makeCache(clock: makeClock()) { $0.maximumEntrySize = 10 }
        let origin = TestOrigin { _ in
            let stream = AsyncThrowingStream<ArraySlice<UInt8>, any Error> { continuation in
                for chunk in ["0123", "4567", "89ab", "cdef"] { continuation.yield(Array(chunk.utf8)[...]) }
                continuation.finish()
            }
            return (makeResponse(200, [("Cache-Control", "max-age=60")]), HTTPCacheBody(stream))
        }
        let (first, body) = try await cache.get(makeRequest(), origin)
        #expect(first.outcome == .miss)
        #expect(body == "0123456789abcdef")
        #expect(try await cache.get(makeRequest(), origin).0.outcome == .miss)
        // A declared length over the limit is not even read before returning.
        origin.respond(200, [("Cache-Control", "max-age=60"), ("Content-Length", "11")], body: "0123456789a")
        #expect(try await cache.get(makeRequest(), origin).1 == "0123456789a")
        #expect(try await cache.get(makeRequest(), origin).0.outcome == .miss)
    }

    @Test func hugeHeadersPassThroughUnstored() async throws {
        let cache = try makeCache(clock: makeClock()) { $0.maximumHeaderSize = 1024 }
        let origin = TestOrigin(200, [("Cache-Control", "max-age=60"), ("X-Big", String(repeating: "x", count: 2000))])
        #expect(try await cache.get(makeRequest(), origin).0.response.headerFields[HTTPField.Name("X-Big")!]?.count == 2000)
        #expect(try await cache.get(makeRequest(), origin).0.outcome == .miss)
    }

    @Test func removeResponsesForgetsEveryVariantOfAURL() async throws {
        let cache = try makeCache(clock: makeClock())
        let origin = TestOrigin(200, [("Cache-Control", "max-age=60"), ("Vary", "Accept")])
        _ = try await cache.get(makeRequest("/", [("Accept", "a")]), origin)
        _ = try await cache.get(makeRequest("/", [("Accept", "b")]), origin)
        _ = try await cache.get(makeRequest("/other"), origin)
        try await cache.removeResponses(for: makeRequest("/", method: .post))
        #expect(try await cache.get(makeRequest("/", [("Accept", "a")]), origin).0.outcome == .miss)
        #expect(try await cache.get(makeRequest("/", [("Accept", "b")]), origin).0.outcome == .miss)
        #expect(try await cache.get(makeRequest("/other"), origin).0.outcome == .hit)
    }

    // MARK: Disk

    /// A 304 that changes a field besides `Date` is written through to disk (one that changes
    /// only `Date` updates memory alone: the disk copy, received earlier, is only staler).
    @Test func a304ThatChangesAFieldReachesTheDisk() async throws {
        let folder = try TemporaryDirectory(prefix: "stash-http")
        let clock = makeClock()
        let origin = TestOrigin(200, [("Cache-Control", "max-age=10"), ("ETag", "\"v1\""), ("Date", httpDate(clock))], body: "stored")
        do {
            let cache = try makeCache(clock: clock, directory: folder.path)
            _ = try await cache.get(makeRequest("/"), origin)
            clock.advance(by: .seconds(20))
            origin.respond(304, [("Cache-Control", "max-age=10"), ("ETag", "\"v1\""), ("Date", httpDate(clock))], body: "")
            #expect(try await cache.get(makeRequest("/"), origin).0.outcome == .revalidated)
            clock.advance(by: .seconds(20))
            origin.respond(304, [("Cache-Control", "max-age=10"), ("ETag", "\"v1\""), ("X-New", "yes"), ("Date", httpDate(clock))], body: "")
            #expect(try await cache.get(makeRequest("/"), origin).0.outcome == .revalidated)
            await cache.close()
        }
        clock.advance(by: .seconds(2))
        let reopened = try makeCache(clock: clock, directory: folder.path)
        let (hit, body) = try await reopened.get(makeRequest("/"), origin)
        #expect(hit.outcome == .hit)
        #expect(hit.response.headerFields[values: HTTPField.Name("X-New")!] == ["yes"])
        #expect(body == "stored")
        #expect(origin.count == 3)
        await reopened.close()
    }

    @Test func responsesSurviveARestartOnDisk() async throws {
        let folder = try TemporaryDirectory(prefix: "stash-http")
        let clock = makeClock()
        let origin = TestOrigin(200, [("Cache-Control", "max-age=60"), ("Vary", "Accept"), ("X-Test", "1")], body: "persisted")
        do {
            let cache = try makeCache(clock: clock, directory: folder.path)
            _ = try await cache.get(makeRequest("/", [("Accept", "a")]), origin)
            await cache.close()
        }
        clock.advance(by: .seconds(5))
        let reopened = try makeCache(clock: clock, directory: folder.path)
        let (hit, body) = try await reopened.get(makeRequest("/", [("Accept", "a")]), origin)
        #expect(hit.outcome == .hit)
        #expect(body == "persisted")
        #expect(hit.response.headerFields[values: .age] == ["5"])
        #expect(try await reopened.get(makeRequest("/", [("Accept", "b")]), origin).0.outcome == .miss)
        try await reopened.removeAll()
        #expect(try await reopened.get(makeRequest("/", [("Accept", "a")]), origin).0.outcome == .miss)
        await reopened.close()
    }

    @Test func aDamagedDiskEntryIsAMiss() async throws {
        let folder = try TemporaryDirectory(prefix: "stash-http")
        let disk = try DiskCache<Data>(directory: folder.path)
        try await disk.setValue(Data([0x53, 0x48, 0x43, 0x31, 0xff, 0xff]), forKey: "GET https://example.com/resource")
        await disk.close()
        let cache = try makeCache(clock: makeClock(), directory: folder.path)
        let origin = TestOrigin(200, fresh)
        #expect(try await cache.get(makeRequest(), origin).0.outcome == .miss)
        #expect(try await cache.get(makeRequest(), origin).0.outcome == .hit)
        await cache.close()
    }

    @Test func encodingRoundTripsAndRejectsEveryTruncation() throws {
        let response = StoredResponse(
            status: .init(code: 203, reasonPhrase: "Yes"), fields: makeResponse(200, [("A", "1"), ("b", "2")]).headerFields,
            requestTime: 5, responseTime: -7, varyValues: [.init(name: "accept", value: nil), .init(name: "x", value: "1")],
            body: Array("body".utf8))
        let bytes = try #require(HTTPCacheEntry(variants: [response, response]).encoded())
        let decoded = HTTPCacheEntry.decode(bytes)
        #expect(decoded?.variants.count == 2)
        #expect(decoded?.variants[1].status.reasonPhrase == "Yes")
        #expect(decoded?.variants[1].fields == response.fields)
        #expect(decoded?.variants[1].varyValues == response.varyValues)
        #expect(decoded?.variants[1].body == response.body)
        #expect(decoded?.variants[1].responseTime == -7)
        for length in 0..<bytes.count { #expect(HTTPCacheEntry.decode(bytes[0..<length]) == nil) }
    }
}
