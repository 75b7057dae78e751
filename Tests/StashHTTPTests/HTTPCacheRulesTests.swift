import HTTPTypes
import Testing
@testable import StashHTTP

/// The policy as pure functions: every rule from request and response values, no cache, no I/O.
@Suite(.timeLimit(.minutes(5))) struct HTTPCacheRulesTests {
    let now: Int64 = epochSeconds * 1_000_000_000
    let shared = HTTPCacheRules(mode: .shared, heuristicCap: 86_400)
    let `private` = HTTPCacheRules(mode: .private, heuristicCap: 86_400)

    func date(_ offset: Int64) -> String { HTTPDate.format(epochSeconds + offset) }

    /// A response received at `now` (request sent `delay` seconds before), with `fields`.
    func stored(
        _ status: Int, _ fields: [(String, String)], delay: Int64 = 0, request: HTTPRequest = makeRequest(), body: String = ""
    ) -> StoredResponse {
        let response = makeResponse(status, fields)
        let names = HTTPCacheRules.varyNames(response.headerFields) ?? ["*"]
        return StoredResponse(
            status: response.status, fields: HTTPCacheRules.storableFields(of: response.headerFields),
            requestTime: now - delay * 1_000_000_000, responseTime: now,
            varyValues: HTTPCacheRules.varyValues(names: names, request: request), body: Array(body.utf8))
    }

    func stored(_ fields: [(String, String)], delay: Int64 = 0, request: HTTPRequest = makeRequest(), body: String = "") -> StoredResponse {
        stored(200, fields, delay: delay, request: request, body: body)
    }

    func seconds(_ value: Int64) -> Int64 { value * 1_000_000_000 }

    // MARK: Storability

    @Test func storesOnlyGETAndHEAD() {
        let response = stored([("Cache-Control", "max-age=60")])
        #expect(shared.isStorable(response, for: makeRequest()))
        #expect(shared.isStorable(response, for: makeRequest(method: .head)))
        #expect(!shared.isStorable(response, for: makeRequest(method: .post)))
        #expect(!shared.isStorable(response, for: makeRequest(method: .put)))
    }

    @Test func noStoreAndPrivate() {
        #expect(!shared.isStorable(stored([("Cache-Control", "max-age=60, no-store")]), for: makeRequest()))
        #expect(!shared.isStorable(stored([("Cache-Control", "max-age=60")]), for: makeRequest("/", [("Cache-Control", "no-store")])))
        #expect(!shared.isStorable(stored([("Cache-Control", "max-age=60, private")]), for: makeRequest()))
        #expect(`private`.isStorable(stored([("Cache-Control", "max-age=60, private")]), for: makeRequest()))
    }

    @Test func mustUnderstandOverridesNoStoreForKnownStatuses() {
        let known = stored([("Cache-Control", "max-age=60, no-store, must-understand")])
        #expect(shared.isStorable(known, for: makeRequest()))
        let unknown = stored(299, [("Cache-Control", "max-age=60, no-store, must-understand")])
        #expect(!shared.isStorable(unknown, for: makeRequest()))
    }

    @Test func authorizationInSharedMode() {
        let request = makeRequest("/", [("Authorization", "Basic eDp5")])
        #expect(!shared.isStorable(stored([("Cache-Control", "max-age=60")]), for: request))
        #expect(shared.isStorable(stored([("Cache-Control", "max-age=60, public")]), for: request))
        #expect(shared.isStorable(stored([("Cache-Control", "s-maxage=60")]), for: request))
        #expect(shared.isStorable(stored([("Cache-Control", "max-age=60, must-revalidate")]), for: request))
        #expect(`private`.isStorable(stored([("Cache-Control", "max-age=60")]), for: request))
    }

    @Test func statusesWithoutExplicitFreshness() {
        let lastModified = [("Date", date(0)), ("Last-Modified", date(-10_000))]
        #expect(shared.isStorable(stored(200, lastModified), for: makeRequest()))
        #expect(shared.isStorable(stored(404, lastModified), for: makeRequest()))
        #expect(!shared.isStorable(stored(302, lastModified), for: makeRequest()))
        #expect(shared.isStorable(stored(302, [("Cache-Control", "max-age=60")]), for: makeRequest()))
        #expect(!shared.isStorable(stored(206, [("Cache-Control", "max-age=60")]), for: makeRequest()))
        #expect(!shared.isStorable(stored(100, [("Cache-Control", "max-age=60")]), for: makeRequest()))
        // Storable but useless: no freshness, no validator.
        #expect(!shared.isStorable(stored(200, [("Date", date(0))]), for: makeRequest()))
    }

    @Test func hopByHopAndConnectionFieldsAreNotStored() {
        let fields = HTTPCacheRules.storableFields(of: makeResponse(200, [
            ("Connection", "a, B"), ("a", "1"), ("b", "2"), ("c", "3"), ("Keep-Alive", "x"),
            ("Transfer-Encoding", "chunked"), ("Proxy-Authenticate", "x"), ("TE", "x"), ("Upgrade", "x"),
        ]).headerFields)
        #expect(fields.map(\.name.canonicalName) == ["c"])
    }

    // MARK: Freshness

    @Test func freshnessLifetimePrecedence() {
        let all = [("Cache-Control", "s-maxage=10, max-age=20"), ("Expires", date(30)), ("Date", date(0))]
        #expect(shared.freshnessLifetime(stored(all)) == seconds(10))
        #expect(`private`.freshnessLifetime(stored(all)) == seconds(20))
        #expect(shared.freshnessLifetime(stored([("Expires", date(30)), ("Date", date(0))])) == seconds(30))
        #expect(shared.freshnessLifetime(stored([("Expires", date(30)), ("Date", date(-10))])) == seconds(40))
        #expect(shared.freshnessLifetime(stored([("Expires", date(-30)), ("Date", date(0))])) == 0)
    }

    @Test func heuristicFreshnessIsTenPercentCapped() {
        let tenThousand = stored([("Date", date(0)), ("Last-Modified", date(-10_000))])
        #expect(shared.freshnessLifetime(tenThousand) == seconds(1000))
        let old = stored([("Date", date(0)), ("Last-Modified", date(-100_000_000))])
        #expect(shared.freshnessLifetime(old) == seconds(86_400))
        #expect(shared.freshnessLifetime(stored(302, [("Date", date(0)), ("Last-Modified", date(-10_000))])) == 0)
        #expect(shared.freshnessLifetime(stored(302, [("Cache-Control", "public"), ("Date", date(0)), ("Last-Modified", date(-10_000))])) == seconds(1000))
        #expect(shared.freshnessLifetime(stored([("Date", date(0)), ("Last-Modified", date(10))])) == 0)
        // An explicit Expires, even invalid, turns the heuristic off.
        #expect(shared.freshnessLifetime(stored([("Date", date(0)), ("Last-Modified", date(-10_000)), ("Expires", "0")])) == 0)
    }

    @Test func ageFollowsRFC9111() {
        // Age 10 from upstream, 2 s of request delay, 30 s resident.
        let response = stored([("Cache-Control", "max-age=60"), ("Date", date(0)), ("Age", "10")], delay: 2)
        #expect(shared.currentAge(response, now: now + seconds(30)) == seconds(42))
        // A Date in the past gives an apparent age larger than Age.
        let late = stored([("Cache-Control", "max-age=60"), ("Date", date(-100)), ("Age", "10")])
        #expect(shared.currentAge(late, now: now) == seconds(100))
        // A Date in the future never makes the age negative.
        let early = stored([("Date", date(100))])
        #expect(shared.currentAge(early, now: now) == 0)
    }

    @Test func servedAgeIsWholeSecondsAndDateIsKept() {
        let response = stored([("Cache-Control", "max-age=60"), ("Date", date(0)), ("Age", "5")])
        let fields = shared.servedFields(response, now: now + 2_500_000_000)
        #expect(fields[.age] == "7")
        #expect(fields[.date] == date(0))
    }

    // MARK: Bad input, one field at a time

    @Test func malformedAgeIsIgnoredOrStale() {
        #expect(StoredResponse.parseAge(["abc"]) == 0)
        #expect(StoredResponse.parseAge(["-7200"]) == 0)
        #expect(StoredResponse.parseAge(["7200.0"]) == 0)
        #expect(StoredResponse.parseAge(["7200;foo=bar"]) == 0)
        #expect(StoredResponse.parseAge([""]) == 0)
        #expect(StoredResponse.parseAge(["7200, 0"]) == 7200)
        #expect(StoredResponse.parseAge(["0, 7200"]) == 0)
        #expect(StoredResponse.parseAge(["7200", "0"]) == 7200)
        #expect(StoredResponse.parseAge(["2147483649"]) == 2_147_483_648)
        #expect(StoredResponse.parseAge(["99999999999999999999999999"]) == 2_147_483_648)
        let huge = stored([("Cache-Control", "max-age=3600"), ("Date", date(0)), ("Age", "2147483648")])
        #expect(shared.decision(for: makeRequest(), stored: huge, now: now) == .validate)
    }

    @Test func malformedExpiresIsInThePast() {
        for value in ["0", "-1", "garbage", "Thu, 18 Aug 2050 02:01:18 UTC", ""] {
            let response = stored([("Expires", value), ("Date", date(0))])
            #expect(response.expires == .invalid)
            #expect(shared.freshnessLifetime(response) == 0)
        }
        let twoLines = stored([("Expires", date(100)), ("Expires", date(200)), ("Date", date(0))])
        #expect(shared.freshnessLifetime(twoLines) == 0)
    }

    @Test func malformedDateIsReplacedByTheResponseTime() {
        for value in ["garbage", "", "Thu, 18 Aug 2050 02:01:18 AEST"] {
            let response = stored([("Expires", date(100)), ("Date", value)])
            #expect(response.date == nil)
            #expect(shared.freshnessLifetime(response) == seconds(100))
            #expect(shared.currentAge(response, now: now) == 0)
        }
    }

    @Test func malformedVaryNeverMatches() {
        for value in ["*", "*, *", ", *", "Foo, *", "Foo Bar", "Foo/Bar"] {
            let response = makeResponse(200, [("Vary", value), ("Cache-Control", "max-age=60")])
            #expect(HTTPCacheRules.varyNames(response.headerFields) == ["*"])
            #expect(!shared.isStorable(stored([("Vary", value), ("Cache-Control", "max-age=60")]), for: makeRequest()))
        }
        #expect(HTTPCacheRules.varyNames(makeResponse(200, [("Vary", ", ,Foo,, foo")]).headerFields) == ["foo"])
    }

    @Test func malformedETagIsUsedVerbatimOrNotAtAll() {
        let unquoted = stored([("ETag", "abc"), ("Cache-Control", "max-age=0")])
        let (request, conditional) = HTTPCacheRules.validationRequest(for: makeRequest(), stored: unquoted)
        #expect(conditional)
        #expect(request.headerFields[.ifNoneMatch] == "abc")
        let twoLines = stored([("ETag", "\"a\""), ("ETag", "\"b\""), ("Cache-Control", "max-age=0")])
        #expect(twoLines.etag == nil)
        #expect(!HTTPCacheRules.validationRequest(for: makeRequest(), stored: twoLines).1)
        #expect(!HTTPCacheRules.weakCompare("", ""))
        #expect(!HTTPCacheRules.weakCompare("W/", "W/"))
    }

    /// Entity-tags compare octet by octet (RFC 9110 §8.8.3.2), not as Swift strings: found by
    /// FuzzETag (Fuzzing/FailCases/FuzzETag/crash-ef23380…), a tag starting with a combining
    /// mark, whose `W/` form the character-wise `hasPrefix("W/")` did not see (`/` and the mark
    /// form one character).
    @Test func entityTagsCompareByOctets() {
        #expect(HTTPCacheRules.weakCompare("W/\u{0616}x", "\u{0616}x"))
        #expect(HTTPCacheRules.weakCompare("W/\u{0616}x", "W/\u{0616}x"))
        // Canonically equivalent, different octets: different tags.
        #expect(!HTTPCacheRules.weakCompare("\"caf\u{E9}\"", "\"cafe\u{301}\""))
        #expect(!HTTPCacheRules.weakCompare("W/\"caf\u{E9}\"", "\"cafe\u{301}\""))
    }

    // MARK: Request directives

    @Test func requestDirectives() {
        let response = stored([("Cache-Control", "max-age=100"), ("Date", date(0))])
        let at50 = now + seconds(50)
        #expect(shared.decision(for: makeRequest(), stored: response, now: at50) == .fresh)
        #expect(shared.decision(for: makeRequest("/resource", [("Cache-Control", "no-cache")]), stored: response, now: at50) == .validate)
        #expect(shared.decision(for: makeRequest("/resource", [("Pragma", "no-cache")]), stored: response, now: at50) == .validate)
        #expect(shared.decision(for: makeRequest("/resource", [("Pragma", "foo")]), stored: response, now: at50) == .fresh)
        // Cache-Control wins over Pragma.
        #expect(shared.decision(for: makeRequest("/resource", [("Cache-Control", "max-age=60"), ("Pragma", "no-cache")]), stored: response, now: at50) == .fresh)
        #expect(shared.decision(for: makeRequest("/resource", [("Cache-Control", "max-age=40")]), stored: response, now: at50) == .validate)
        #expect(shared.decision(for: makeRequest("/resource", [("Cache-Control", "min-fresh=60")]), stored: response, now: at50) == .validate)
        #expect(shared.decision(for: makeRequest("/resource", [("Cache-Control", "min-fresh=40")]), stored: response, now: at50) == .fresh)
        #expect(shared.decision(for: makeRequest("/resource", [("Cache-Control", "unknown-directive, foo=bar")]), stored: response, now: at50) == .fresh)
        let at150 = now + seconds(150)
        #expect(shared.decision(for: makeRequest(), stored: response, now: at150) == .validate)
        #expect(shared.decision(for: makeRequest("/resource", [("Cache-Control", "max-stale")]), stored: response, now: at150) == .staleAllowed)
        #expect(shared.decision(for: makeRequest("/resource", [("Cache-Control", "max-stale=60")]), stored: response, now: at150) == .staleAllowed)
        #expect(shared.decision(for: makeRequest("/resource", [("Cache-Control", "max-stale=40")]), stored: response, now: at150) == .validate)
    }

    @Test func responsesThatForbidStale() {
        let at150 = now + seconds(150)
        let request = makeRequest("/resource", [("Cache-Control", "max-stale")])
        for cc in ["max-age=100, must-revalidate", "max-age=100, proxy-revalidate", "s-maxage=100", "max-age=100, no-cache"] {
            let response = stored([("Cache-Control", cc), ("Date", date(0))])
            #expect(shared.decision(for: request, stored: response, now: at150) == .validate)
            #expect(!shared.mayServeStaleOnError(response, for: makeRequest(), now: at150))
        }
        // proxy-revalidate binds shared caches only.
        let proxy = stored([("Cache-Control", "max-age=100, proxy-revalidate"), ("Date", date(0))])
        #expect(`private`.decision(for: request, stored: proxy, now: at150) == .staleAllowed)
    }

    @Test func noCacheResponsesAreStoredAndAlwaysRevalidated() {
        let response = stored([("Cache-Control", "no-cache"), ("ETag", "\"x\"")])
        #expect(shared.isStorable(response, for: makeRequest()))
        #expect(shared.decision(for: makeRequest(), stored: response, now: now) == .validate)
    }

    @Test func staleWhileRevalidateAndStaleIfError() {
        let response = stored([("Cache-Control", "max-age=100, stale-while-revalidate=50, stale-if-error=200"), ("Date", date(0))])
        #expect(shared.decision(for: makeRequest(), stored: response, now: now + seconds(140)) == .staleWhileRevalidate)
        #expect(shared.decision(for: makeRequest(), stored: response, now: now + seconds(160)) == .validate)
        #expect(shared.mayServeStaleOnError(response, for: makeRequest(), now: now + seconds(290)))
        #expect(!shared.mayServeStaleOnError(response, for: makeRequest(), now: now + seconds(310)))
        let plain = stored([("Cache-Control", "max-age=100"), ("Date", date(0))])
        #expect(!shared.mayServeStaleOnError(plain, for: makeRequest(), now: now + seconds(110)))
        #expect(shared.mayServeStaleOnError(plain, for: makeRequest("/resource", [("Cache-Control", "stale-if-error=60")]), now: now + seconds(110)))
    }

    // MARK: Validation

    @Test func validationRequestReplacesTheClientsConditionals() {
        let response = stored([("ETag", "W/\"1\""), ("Last-Modified", date(-100)), ("Cache-Control", "max-age=0")])
        let client = makeRequest("/resource", [("If-None-Match", "\"other\""), ("If-Modified-Since", date(-5)), ("Accept", "x")])
        let (request, conditional) = HTTPCacheRules.validationRequest(for: client, stored: response)
        #expect(conditional)
        #expect(request.headerFields[values: .ifNoneMatch] == ["W/\"1\""])
        #expect(request.headerFields[values: .ifModifiedSince] == [date(-100)])
        #expect(request.headerFields[.accept] == "x")
    }

    @Test func a304UpdatesEveryFieldButContentLength() {
        let storedFields = makeResponse(200, [
            ("Content-Length", "36"), ("Content-Type", "text/plain"), ("X-A", "1"), ("Cache-Control", "max-age=1"), ("ETag", "\"1\""),
        ]).headerFields
        let notModified = makeResponse(304, [
            ("Content-Length", "10"), ("Content-Type", "text/html"), ("X-B", "2"), ("Cache-Control", "max-age=3600"),
            ("Connection", "close"), ("Keep-Alive", "5"),
        ]).headerFields
        let updated = HTTPCacheRules.fieldsUpdated(storedFields, with: notModified)
        #expect(updated[.contentLength] == "36")
        #expect(updated[.contentType] == "text/html")
        #expect(updated[HTTPField.Name("X-A")!] == "1")
        #expect(updated[HTTPField.Name("X-B")!] == "2")
        #expect(updated[values: .cacheControl] == ["max-age=3600"])
        #expect(updated[.connection] == nil)
        #expect(updated[HTTPField.Name("Keep-Alive")!] == nil)
    }

    @Test func clientConditionalsUseWeakComparisonAndPrecedence() {
        let response = stored([("ETag", "W/\"abc\""), ("Last-Modified", date(-100)), ("Cache-Control", "max-age=60")])
        func matches(_ fields: [(String, String)]) -> Bool {
            HTTPCacheRules.clientConditionMatches(makeRequest("/resource", fields), stored: response)
        }
        #expect(matches([("If-None-Match", "\"abc\"")]))
        #expect(matches([("If-None-Match", "\"x\", W/\"abc\", \"y\"")]))
        #expect(matches([("If-None-Match", "*")]))
        #expect(!matches([("If-None-Match", "\"abd\"")]))
        #expect(matches([("If-Modified-Since", date(-50))]))
        #expect(!matches([("If-Modified-Since", date(-150))]))
        #expect(!matches([("If-Modified-Since", "garbage")]))
        // If-None-Match takes precedence over If-Modified-Since.
        #expect(!matches([("If-None-Match", "\"nope\""), ("If-Modified-Since", date(-50))]))
    }

    // MARK: Vary

    @Test func varyNormalisesSelectingFields() {
        let request = makeRequest("/", [("Accept-Language", "en-US, FR"), ("Foo", "1"), ("Foo", "2 ,3")])
        let values = HTTPCacheRules.varyValues(names: ["accept-language", "bar", "foo"], request: request)
        #expect(values.map(\.value) == ["en-us,fr", nil, "1,2,3"])
        let response = StoredResponse(status: .ok, fields: [:], requestTime: 0, responseTime: 0, varyValues: values, body: [])
        #expect(HTTPCacheRules.varyMatches(response, request: makeRequest("/", [("Accept-Language", "fr,en-us"), ("Foo", "1, 2, 3")])))
        #expect(!HTTPCacheRules.varyMatches(response, request: makeRequest("/", [("Accept-Language", "fr,en-us"), ("Foo", "1, 3, 2")])))
        #expect(!HTTPCacheRules.varyMatches(response, request: makeRequest("/", [("Accept-Language", "fr,en-us"), ("Foo", "1,2,3"), ("Bar", "")])))
        #expect(!HTTPCacheRules.varyMatches(response, request: makeRequest("/", [("Foo", "1,2,3")])))
    }

    // MARK: CDN-Cache-Control

    @Test func cdnCacheControlReplacesCacheControlInSharedMode() {
        let cdnFresh = stored([("Cache-Control", "no-store"), ("CDN-Cache-Control", "max-age=100")])
        #expect(shared.isStorable(cdnFresh, for: makeRequest()))
        #expect(shared.freshnessLifetime(cdnFresh) == seconds(100))
        #expect(!`private`.isStorable(cdnFresh, for: makeRequest()))
        let cdnShort = stored([("Cache-Control", "max-age=3600"), ("CDN-Cache-Control", "max-age=1")])
        #expect(shared.freshnessLifetime(cdnShort) == seconds(1))
        #expect(`private`.freshnessLifetime(cdnShort) == seconds(3600))
        #expect(!shared.isStorable(stored([("Cache-Control", "max-age=100"), ("CDN-Cache-Control", "private")]), for: makeRequest()))
        let noCache = stored([("Cache-Control", "max-age=100"), ("CDN-Cache-Control", "no-cache"), ("ETag", "\"1\"")])
        #expect(shared.decision(for: makeRequest(), stored: noCache, now: now) == .validate)
    }

    @Test func anInvalidCDNCacheControlIsIgnoredWhole() {
        for value in ["max-age=10000, &&&&&", "max-age=\"10000\"", "Max-Age=5", "max-age=", "max-age=1.5"] {
            let response = stored([("Cache-Control", "no-store"), ("CDN-Cache-Control", value)])
            #expect(response.cdnCacheControl == nil)
            #expect(!shared.isStorable(response, for: makeRequest()))
        }
    }

    // MARK: Invalidation

    @Test func unsafeMethods() {
        for method in ["POST", "PUT", "DELETE", "PATCH", "M-SEARCH", "FOO"] {
            #expect(HTTPCacheRules.isUnsafe(HTTPRequest.Method(method)!))
        }
        for method in ["GET", "HEAD", "OPTIONS", "TRACE"] {
            #expect(!HTTPCacheRules.isUnsafe(HTTPRequest.Method(method)!))
        }
    }

    @Test func invalidatedTargetsIncludeSameOriginLocations() {
        let request = makeRequest("/a?x=1", method: .post)
        let response = makeResponse(201, [
            ("Location", "https://EXAMPLE.com/b"), ("Content-Location", "/c"),
        ])
        let targets = HTTPCacheRules.invalidatedTargets(request: request, response: response).map(\.2)
        #expect(targets == ["/a?x=1", "/b", "/c"])
        let foreign = makeResponse(200, [("Location", "https://other.example/b"), ("Content-Location", "http://example.com/c")])
        #expect(HTTPCacheRules.invalidatedTargets(request: request, response: foreign).map(\.2) == ["/a?x=1"])
        #expect(HTTPCacheRules.invalidatedTargets(request: request, response: makeResponse(500, [])).isEmpty)
        #expect(HTTPCacheRules.invalidatedTargets(request: makeRequest(), response: makeResponse(200, [])).isEmpty)
    }

    // MARK: HEAD answered by a stored GET response (RFC 9111 §4, §4.3.5)

    @Test func aFreshGETResponseAnswersAHEADAsAHit() {
        let get = stored([("Cache-Control", "max-age=60")], body: "body")
        #expect(shared.headAnswer(from: get, for: makeRequest(method: .head), policy: .useProtocolPolicy, now: now + seconds(30)) == .hit)
        #expect(`private`.headAnswer(from: get, for: makeRequest(method: .head), policy: .noStore, now: now + seconds(30)) == .hit)
    }

    @Test func onlyAHEADRequestIsAnsweredByAStoredGET() {
        let get = stored([("Cache-Control", "max-age=60")])
        for method in [HTTPRequest.Method.get, .post, .options] {
            #expect(shared.headAnswer(from: get, for: makeRequest(method: method), policy: .useProtocolPolicy, now: now) == nil)
        }
    }

    @Test func aStaleGETResponseAnswersAHEADOnlyWithinMaxStale() {
        let get = stored([("Cache-Control", "max-age=10")])
        let later = now + seconds(30)
        #expect(shared.headAnswer(from: get, for: makeRequest(method: .head), policy: .useProtocolPolicy, now: later) == nil)
        let maxStale = makeRequest(method: .head, [("Cache-Control", "max-stale=60")])
        #expect(shared.headAnswer(from: get, for: maxStale, policy: .useProtocolPolicy, now: later) == .stale)
        let tooStale = makeRequest(method: .head, [("Cache-Control", "max-stale=5")])
        #expect(shared.headAnswer(from: get, for: tooStale, policy: .useProtocolPolicy, now: later) == nil)
    }

    @Test func aGETResponseThatNeedsTheOriginLeavesTheHEADToTheOrigin() {
        let swr = stored([("Cache-Control", "max-age=10, stale-while-revalidate=600")])
        #expect(shared.headAnswer(from: swr, for: makeRequest(method: .head), policy: .useProtocolPolicy, now: now + seconds(30)) == nil)
        let noCache = stored([("Cache-Control", "max-age=60, no-cache")])
        #expect(shared.headAnswer(from: noCache, for: makeRequest(method: .head), policy: .useProtocolPolicy, now: now) == nil)
        let requestNoCache = makeRequest(method: .head, [("Cache-Control", "no-cache")])
        #expect(shared.headAnswer(from: stored([("Cache-Control", "max-age=60")]), for: requestNoCache, policy: .useProtocolPolicy, now: now) == nil)
    }

    @Test func policiesDecideWhetherAStoredGETAnswersAHEAD() {
        let fresh = stored([("Cache-Control", "max-age=60")])
        let stale = stored([("Cache-Control", "max-age=10, must-revalidate")])
        let head = makeRequest(method: .head)
        let later = now + seconds(30)
        #expect(shared.headAnswer(from: fresh, for: head, policy: .reload, now: now) == nil)
        #expect(shared.headAnswer(from: fresh, for: head, policy: .revalidate, now: now) == nil)
        #expect(shared.headAnswer(from: fresh, for: head, policy: .returnStoredElseLoad, now: now) == .hit)
        #expect(shared.headAnswer(from: stale, for: head, policy: .returnStoredElseLoad, now: later) == .stale)
        #expect(shared.headAnswer(from: stale, for: head, policy: .returnStoredDontLoad, now: later) == .stale)
    }

    @Test func aHEAD200UpdatesTheStoredGETWhenValidatorsAndLengthAgree() {
        let get = stored([("Cache-Control", "max-age=10"), ("ETag", "\"a\""), ("Last-Modified", date(-3600))], body: "12345")
        let agreeing = makeResponse(200, [("Cache-Control", "max-age=600"), ("ETag", "\"a\""), ("Last-Modified", date(-3600)), ("Content-Length", "5")])
        #expect(HTTPCacheRules.headResponseUpdates(get, with: agreeing))
        #expect(HTTPCacheRules.headResponseUpdates(get, with: makeResponse(200, [("Cache-Control", "max-age=600")])))
        #expect(!HTTPCacheRules.headResponseUpdates(get, with: makeResponse(200, [("ETag", "\"b\"")])))
        #expect(!HTTPCacheRules.headResponseUpdates(get, with: makeResponse(200, [("ETag", "\"a\""), ("ETag", "\"a\"")])))
        #expect(!HTTPCacheRules.headResponseUpdates(get, with: makeResponse(200, [("Last-Modified", date(-60))])))
        #expect(!HTTPCacheRules.headResponseUpdates(get, with: makeResponse(200, [("Content-Length", "6")])))
        #expect(!HTTPCacheRules.headResponseUpdates(get, with: makeResponse(200, [("Content-Length", "five")])))
        #expect(!HTTPCacheRules.headResponseUpdates(get, with: makeResponse(410, [("ETag", "\"a\"")])))
    }

    @Test func anyKeepable200ToHEADMayUpdateAStoredGET() {
        #expect(shared.mayUpdateStoredGet(from: stored(200, [])))
        #expect(shared.mayUpdateStoredGet(from: stored(200, [("X-New", "1")])))
        #expect(!shared.mayUpdateStoredGet(from: stored(200, [("Cache-Control", "no-store")])))
        #expect(!shared.mayUpdateStoredGet(from: stored(200, [("Cache-Control", "private")])))
        #expect(`private`.mayUpdateStoredGet(from: stored(200, [("Cache-Control", "private")])))
        #expect(!shared.mayUpdateStoredGet(from: stored(404, [])))
    }
}
