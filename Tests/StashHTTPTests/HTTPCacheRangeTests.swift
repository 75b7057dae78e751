import HTTPTypes
import Stash
import Testing
@testable import StashHTTP

/// Range requests answered from a stored complete response (RFC 9110 §14), and the ones that go
/// to the origin.
@Suite(.timeLimit(.minutes(5))) struct HTTPCacheRangeTests {
    /// A cache holding a fresh `0123456789A` with a strong `ETag` and a strong `Last-Modified`.
    private func storedResource(
        _ extraFields: [(String, String)] = []
    ) async throws -> (HTTPCache, TestOrigin, ManualClock) {
        let clock = makeClock()
        let cache = try makeCache(clock: clock)
        let origin = TestOrigin(
            200,
            [("Cache-Control", "max-age=60"), ("ETag", "\"v1\""), ("Last-Modified", httpDate(clock, -3600)),
             ("Date", httpDate(clock)), ("A", "1")] + extraFields,
            body: "0123456789A")
        #expect(try await cache.get(makeRequest(), origin).0.outcome == .miss)
        return (cache, origin, clock)
    }

    @Test func aSingleRangeOfAFreshResponseIsServedFromTheStore() async throws {
        let (cache, origin, clock) = try await storedResource()
        clock.advance(by: .seconds(5))
        for (range, body, contentRange) in [("bytes=0-1", "01", "bytes 0-1/11"), ("bytes=1-", "123456789A", "bytes 1-10/11"),
                                            ("bytes=-1", "A", "bytes 10-10/11"), ("bytes=9-99", "9A", "bytes 9-10/11"),
                                            ("bytes=-50", "0123456789A", "bytes 0-10/11")] {
            let (result, text) = try await cache.get(makeRequest("/resource", [("Range", range)]), origin)
            #expect(result.response.status == .partialContent, "\(range)")
            #expect(text == body, "\(range)")
            #expect(result.response.headerFields[.contentRange] == contentRange)
            #expect(result.response.headerFields[.contentLength] == String(body.utf8.count))
            #expect(result.response.headerFields[HTTPField.Name("A")!] == "1")  // the stored fields
            #expect(result.response.headerFields[.age] == "5")
            #expect(result.outcome == .hit)
        }
        #expect(origin.count == 1)
    }

    @Test func aRangeWithNoByteInTheBodyIsA416() async throws {
        let (cache, origin, clock) = try await storedResource()
        for range in ["bytes=11-", "bytes=20-30", "bytes=-0"] {
            let (result, text) = try await cache.get(makeRequest("/resource", [("Range", range)]), origin)
            #expect(result.response.status == .rangeNotSatisfiable, "\(range)")
            #expect(result.response.headerFields[.contentRange] == "bytes */11")
            #expect(result.response.headerFields[.contentLength] == "0")
            #expect(result.response.headerFields[.date] == httpDate(clock))
            #expect(result.outcome == .hit)
            let fast = cache.freshResponseWithCacheStatus(for: makeRequest("/resource", [("Range", range)]))
            #expect(fast?.response.status == .rangeNotSatisfiable)
            #expect(fast?.response.headerFields[.cacheStatus] == "Stash; hit")
            #expect(text.isEmpty)
        }
        #expect(origin.count == 1)
    }

    /// A partial answer drops the digests of the whole body, which the part would not match.
    @Test func aPartCarriesNoDigestOfTheWholeBody() async throws {
        let (cache, origin, _) = try await storedResource([("Content-Digest", "sha-256=:abc=:"), ("Content-MD5", "xyz"), ("Repr-Digest", "sha-256=:abc=:")])
        let (result, _) = try await cache.get(makeRequest("/resource", [("Range", "bytes=0-1")]), origin)
        #expect(result.response.status == .partialContent)
        #expect(result.response.headerFields[HTTPField.Name("Content-Digest")!] == nil)
        #expect(result.response.headerFields[HTTPField.Name("Content-MD5")!] == nil)
        #expect(result.response.headerFields[HTTPField.Name("Repr-Digest")!] == "sha-256=:abc=:")  // the representation's: kept
    }

    /// RFC 9110 §13.2.2 evaluates `If-Match` and `If-Unmodified-Since` before the range, and the
    /// cache leaves them to the origin: a download resumed against another version gets a 412 there.
    @Test func aRangeWithPreconditionsOnlyTheOriginEvaluatesGoesThere() async throws {
        let (cache, origin, clock) = try await storedResource()
        origin.respond(412, [], body: "")
        for precondition in [("If-Match", "\"v0\""), ("If-Unmodified-Since", httpDate(clock, -7200))] {
            let (result, _) = try await cache.get(makeRequest("/resource", [("Range", "bytes=5-"), precondition]), origin)
            #expect(result.response.status == .preconditionFailed, "\(precondition)")
            #expect(result.outcome == .bypass)
            #expect(origin.requests.last?.headerFields[HTTPField.Name(precondition.0)!] == precondition.1)
            #expect(cache.freshResponseWithCacheStatus(for: makeRequest("/resource", [("Range", "bytes=5-"), precondition])) == nil)
        }
        #expect(origin.count == 3)
    }

    @Test func otherClientConditionsAreAnsweredBeforeTheRange() async throws {
        let (cache, origin, clock) = try await storedResource()
        let (modified, _) = try await cache.get(makeRequest("/resource", [("Range", "bytes=0-1"), ("If-Modified-Since", httpDate(clock))]), origin)
        #expect(modified.response.status == .notModified)
        let (other, text) = try await cache.get(makeRequest("/resource", [("Range", "bytes=0-1"), ("If-None-Match", "\"v0\"")]), origin)
        #expect(other.response.status == .partialContent)
        #expect(text == "01")
        #expect(origin.count == 1)
    }

    @Test func ifRangeNeverMatchesAStoredWeakETag() async throws {
        let clock = makeClock()
        let cache = try makeCache(clock: clock)
        let origin = TestOrigin(200, [("Cache-Control", "max-age=60"), ("ETag", "W/\"w\"")], body: "0123456789A")
        _ = try await cache.get(makeRequest(), origin)
        for ifRange in ["W/\"w\"", "\"w\""] {
            let (result, _) = try await cache.get(makeRequest("/resource", [("Range", "bytes=0-1"), ("If-Range", ifRange)]), origin)
            #expect(result.response.status == .ok, "\(ifRange)")
        }
    }

    /// A HEAD ignores `Range` (RFC 9110 §14.2): it is answered as any HEAD, from the store.
    @Test func aHEADWithARangeIsAnsweredAsAnyHEAD() async throws {
        let (cache, origin, _) = try await storedResource()
        let (result, text) = try await cache.get(makeRequest("/resource", method: .head, [("Range", "bytes=0-1")]), origin)
        #expect(result.response.status == .ok)
        #expect(result.outcome == .hit)
        #expect(text.isEmpty)
        #expect(origin.count == 1)
    }

    @Test func aRangeOfAnotherVariantGoesToTheOrigin() async throws {
        let clock = makeClock()
        let cache = try makeCache(clock: clock)
        let origin = TestOrigin(200, [("Cache-Control", "max-age=60"), ("Vary", "Accept-Language")], body: "0123456789A")
        _ = try await cache.get(makeRequest("/resource", [("Accept-Language", "en")]), origin)
        _ = try await cache.get(makeRequest("/resource", [("Accept-Language", "fr"), ("Range", "bytes=0-1")]), origin)
        #expect(origin.count == 2)
        let (english, text) = try await cache.get(makeRequest("/resource", [("Accept-Language", "en"), ("Range", "bytes=0-1")]), origin)
        #expect(english.response.status == .partialContent)
        #expect(text == "01")
        #expect(origin.count == 2)
    }

    @Test func aSuffixOfAnEmptyBodyIsTheWholeEmptyResponse() async throws {
        let clock = makeClock()
        let cache = try makeCache(clock: clock)
        let origin = TestOrigin(200, [("Cache-Control", "max-age=60")], body: "")
        _ = try await cache.get(makeRequest(), origin)
        let (result, text) = try await cache.get(makeRequest("/resource", [("Range", "bytes=-5")]), origin)
        #expect(result.response.status == .ok)
        #expect(text.isEmpty)
        #expect(origin.count == 1)
    }

    /// RFC 9110 §14.2 lets a server ignore a `Range`; the cache ignores what it does not serve.
    @Test func aRangeTheCacheIgnoresGetsTheWholeStoredResponse() async throws {
        let (cache, origin, _) = try await storedResource()
        for range in ["bytes=0-1,4-5", "items=0-1", "bytes=3-1", "bytes=a-b", "bytes 0-1", "bytes=--1"] {
            let (result, text) = try await cache.get(makeRequest("/resource", [("Range", range)]), origin)
            #expect(result.response.status == .ok, "\(range)")
            #expect(text == "0123456789A")
            #expect(result.response.headerFields[.contentRange] == nil)
        }
        #expect(origin.count == 1)
    }

    @Test func ifRangeSendsThePartOnlyWhenTheStrongValidatorMatches() async throws {
        let (cache, origin, clock) = try await storedResource()
        let lastModified = httpDate(clock, -3600)
        for (ifRange, partial) in [("\"v1\"", true), ("\"v2\"", false), ("W/\"v1\"", false),
                                   (lastModified, true), (httpDate(clock, -10), false), ("not a date", false)] {
            let (result, text) = try await cache.get(makeRequest("/resource", [("Range", "bytes=0-1"), ("If-Range", ifRange)]), origin)
            #expect(result.response.status == (partial ? .partialContent : .ok), "\(ifRange)")
            #expect(text == (partial ? "01" : "0123456789A"), "\(ifRange)")
        }
        #expect(origin.count == 1)
    }

    /// A `Last-Modified` within a second of `Date` is a weak validator (RFC 9110 §8.8.2.2).
    @Test func ifRangeWithAWeakLastModifiedSendsTheWholeResponse() async throws {
        let clock = makeClock()
        let cache = try makeCache(clock: clock)
        let now = httpDate(clock)
        let origin = TestOrigin(200, [("Cache-Control", "max-age=60"), ("Last-Modified", now), ("Date", now)], body: "0123456789A")
        _ = try await cache.get(makeRequest(), origin)
        let (result, text) = try await cache.get(makeRequest("/resource", [("Range", "bytes=0-1"), ("If-Range", now)]), origin)
        #expect(result.response.status == .ok)
        #expect(text == "0123456789A")
    }

    @Test func clientConditionsComeBeforeTheRange() async throws {
        let (cache, origin, _) = try await storedResource()
        let (result, _) = try await cache.get(makeRequest("/resource", [("Range", "bytes=0-1"), ("If-None-Match", "\"v1\"")]), origin)
        #expect(result.response.status == .notModified)
        #expect(origin.count == 1)
    }

    @Test func aRangeOnAStaleResponseGoesToTheOriginAsItIs() async throws {
        let (cache, origin, clock) = try await storedResource()
        clock.advance(by: .seconds(61))
        origin.respond { _ in
            var response = makeResponse(206, [("Content-Range", "bytes 0-1/11"), ("Cache-Control", "max-age=60")])
            response.headerFields[.contentLength] = "2"
            return (response, HTTPCacheBody(bytes: Array("01".utf8)))
        }
        let (result, text) = try await cache.get(makeRequest("/resource", [("Range", "bytes=0-1")]), origin)
        #expect(result.outcome == .bypass)
        #expect(result.response.status == .partialContent)
        #expect(text == "01")
        #expect(origin.requests.last?.headerFields[.range] == "bytes=0-1")
        // The part was not stored over the complete response.
        let (whole, wholeText) = try await cache.get(makeRequest("/resource", [("Cache-Control", "max-stale")]), origin)
        #expect(whole.outcome == .stale)
        #expect(wholeText == "0123456789A")
    }

    @Test func aRangeOfAnEncodedResponseOrOneThatRefusesRangesGoesToTheOrigin() async throws {
        for field in [("Content-Encoding", "gzip"), ("Accept-Ranges", "none")] {
            let (cache, origin, _) = try await storedResource([field])
            _ = try await cache.get(makeRequest("/resource", [("Range", "bytes=0-1")]), origin)
            #expect(origin.count == 2, "\(field)")
            #expect(origin.requests.last?.headerFields[.range] == "bytes=0-1")
            #expect(cache.freshResponseWithCacheStatus(for: makeRequest("/resource", [("Range", "bytes=0-1")])) == nil)
            // A response that may not reach the origin gets the stored response whole.
            let (whole, text) = try await cache.get(makeRequest("/resource", [("Range", "bytes=0-1")]), policy: .returnStoredDontLoad, origin)
            #expect(whole.response.status == .ok)
            #expect(text == "0123456789A")
            #expect(origin.count == 2)
        }
        // `identity` is no coding: the part is served.
        let (cache, origin, _) = try await storedResource([("Content-Encoding", "identity")])
        let (part, _) = try await cache.get(makeRequest("/resource", [("Range", "bytes=0-1")]), origin)
        #expect(part.response.status == .partialContent)
        #expect(origin.count == 1)
    }

    @Test func aRangeOfAStoredErrorThatMayNotLoadGetsTheStoredResponse() async throws {
        let clock = makeClock()
        let cache = try makeCache(clock: clock)
        let origin = TestOrigin(404, [("Cache-Control", "max-age=60")], body: "not here")
        _ = try await cache.get(makeRequest(), origin)
        let (result, text) = try await cache.get(makeRequest("/resource", [("Range", "bytes=0-1")]), policy: .returnStoredDontLoad, origin)
        #expect(result.response.status == .notFound)
        #expect(text == "not here")
        #expect(origin.count == 1)
    }

    @Test func aRangeThatMayNotReachTheOriginAndMissesIsA504() async throws {
        let clock = makeClock()
        let cache = try makeCache(clock: clock)
        let origin = TestOrigin(200, [("Cache-Control", "max-age=60")])
        let (dontLoad, _) = try await cache.get(makeRequest("/resource", [("Range", "bytes=0-1")]), policy: .returnStoredDontLoad, origin)
        #expect(dontLoad.response.status == .gatewayTimeout)
        let (onlyIfCached, _) = try await cache.get(makeRequest("/resource", [("Range", "bytes=0-1"), ("Cache-Control", "only-if-cached")]), origin)
        #expect(onlyIfCached.response.status == .gatewayTimeout)
        #expect(origin.count == 0)
    }

    @Test func aStaleResponseServesRangesWhenThePolicySaysAnyStoredResponse() async throws {
        let (cache, origin, clock) = try await storedResource()
        clock.advance(by: .seconds(3600))
        let (result, text) = try await cache.get(makeRequest("/resource", [("Range", "bytes=-2")]), policy: .returnStoredElseLoad, origin)
        #expect(result.outcome == .stale)
        #expect(text == "9A")
        #expect(origin.count == 1)
    }

    @Test func rangeValuesParseAsRFC9110WritesThem() {
        let cases: [(String, Int, ByteRangeAnswer?)] = [
            ("bytes=0-0", 5, .part(0...0)), ("BYTES=1-2", 5, .part(1...2)), (" bytes= 1-2 ", 5, .part(1...2)),
            ("bytes=4-", 5, .part(4...4)), ("bytes=5-", 5, .unsatisfiable(length: 5)), ("bytes=-5", 5, .part(0...4)),
            ("bytes=-0", 5, .unsatisfiable(length: 5)), ("bytes=0-", 0, .unsatisfiable(length: 0)),
            ("bytes=-3", 0, nil),  // a suffix of an empty body: the whole, empty, response
            ("bytes=0-99999999999999999999999999", 5, .part(0...4)),
            ("bytes=99999999999999999999999999-", 5, .unsatisfiable(length: 5)),
            ("bytes=-99999999999999999999999999", 5, .part(0...4)),
            ("bytes=2-1", 5, nil), ("bytes=-", 5, nil), ("bytes=", 5, nil), ("bytes", 5, nil), ("=0-1", 5, nil),
            ("bytes=0-1,2-3", 5, nil), ("bytes=+1-2", 5, nil), ("bytes=1-2-3", 5, nil), ("bytes=0x1-2", 5, nil),
            ("bytes=١-٢", 5, nil),
        ]
        for (value, length, expected) in cases {
            #expect(HTTPCacheRules.parseByteRange(value, length: length) == expected, "\(value) of \(length)")
        }
    }
}
