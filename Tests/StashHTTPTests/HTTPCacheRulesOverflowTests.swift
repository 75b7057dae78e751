import HTTPTypes
import Testing
@testable import StashHTTP

/// Extreme values from the network clamp; they never overflow (a trap would kill the process).
@Suite(.timeLimit(.minutes(5))) struct HTTPCacheRulesOverflowTests {
    let rules = HTTPCacheRules(mode: .shared, heuristicCap: 86_400)
    let now: Int64 = epochSeconds * 1_000_000_000

    func stored(_ fields: [(String, String)]) -> StoredResponse {
        let response = makeResponse(200, fields)
        return StoredResponse(
            status: response.status, fields: HTTPCacheRules.storableFields(of: response.headerFields),
            requestTime: now, responseTime: now, varyValues: [], body: [])
    }

    @Test func farFutureExpiresIsClampedToTheLargestDeltaSeconds() {
        let response = stored([("Date", HTTPDate.format(epochSeconds)), ("Expires", "Fri, 31 Dec 9999 23:59:59 GMT")])
        #expect(rules.freshnessLifetime(response) == CacheControl.maximumDeltaSeconds * 1_000_000_000)
        #expect(rules.decision(for: makeRequest(), stored: response, now: now) == .fresh)
    }

    @Test func hugeMaxAgeAndAgeAreClamped() {
        let response = stored([("Cache-Control", "max-age=99999999999999999999999"), ("Age", "99999999999999999999")])
        #expect(rules.freshnessLifetime(response) == CacheControl.maximumDeltaSeconds * 1_000_000_000)
        #expect(rules.currentAge(response, now: now) == CacheControl.maximumDeltaSeconds * 1_000_000_000)
    }

    // MARK: - Every extreme of every input (issue #25)

    /// Dates at the edges of what `HTTPDate` parses, around the limits of nanoseconds since the
    /// epoch in `Int64` (1677 to 2262), and ordinary ones.
    static let extremeDates: [String?] = [
        nil,
        "Sat, 01 Jan 0000 00:00:00 GMT",
        "Mon, 01 Jan 0001 00:00:00 GMT",
        "Fri, 01 Jan 1700 00:00:00 GMT",
        "Mon, 01 Jan 1731 00:00:00 GMT",
        "Wed, 01 Jan 1800 00:00:00 GMT",
        "Thu, 01 Jan 1970 00:00:00 GMT",
        HTTPDate.format(epochSeconds),
        "Fri, 11 Apr 2262 23:47:16 GMT",
        "Fri, 31 Dec 9999 23:59:59 GMT",
        "Fri, 31 Dec 9999 23:59:60 GMT",
    ]

    /// Times a stored entry may carry (a damaged file can hold any), and clocks.
    static let extremeTimes: [Int64] = [.min, 0, epochSeconds * 1_000_000_000, .max]

    /// `Cache-Control` and `Age` at their parse limits, and the directives that read ages.
    static let extremeDirectives: [[(String, String)]] = [
        [],
        [("Cache-Control", "max-age=0")],
        [("Cache-Control", "max-age=99999999999999999999, stale-while-revalidate=99999999999999999999")],
        [("Cache-Control", "s-maxage=2147483648, stale-if-error=2147483648"), ("Age", "2147483648")],
        [("Cache-Control", "public"), ("Age", "99999999999999999999")],
    ]

    static let extremeRequests: [HTTPRequest] = [
        makeRequest(),
        makeRequest("/resource", [("Cache-Control", "max-age=99999999999999999999, min-fresh=99999999999999999999")]),
        makeRequest("/resource", [("Cache-Control", "max-stale=99999999999999999999, stale-if-error=99999999999999999999")]),
    ]

    /// Walks `currentAge`, `freshnessLifetime`, the heuristic, `decision`, stale-if-error and the
    /// served `Age` over every combination of extreme inputs, in both modes and with the largest
    /// heuristic cap: none may trap (a trap stops the process), and each result stays in range.
    @Test func everyComputationOnExtremeInputsStaysInRange() {
        let maximumNanoseconds = CacheControl.maximumDeltaSeconds * 1_000_000_000
        // `Last-Modified` and `Expires` enter the computations only through their distance to
        // `Date`: the earliest and the latest date give the largest distances either way ("0" is
        // an invalid `Expires`, which means already expired).
        let lastModifiedDates = [nil, Self.extremeDates[1]]
        let expiresDates = [nil, "0", Self.extremeDates[1], Self.extremeDates[9]]
        var checked = 0
        var outOfRange: [String] = []
        for mode in [HTTPCacheMode.shared, .private] {
            var rules = HTTPCacheRules(mode: mode, heuristicCap: .max)
            rules.staleIfUnreachable = .max
            for date in Self.extremeDates {
                for lastModified in lastModifiedDates {
                    for expires in expiresDates {
                        for directives in Self.extremeDirectives {
                            var fields = directives
                            if let date { fields.append(("Date", date)) }
                            if let lastModified { fields.append(("Last-Modified", lastModified)) }
                            if let expires { fields.append(("Expires", expires)) }
                            let stored = HTTPCacheRules.storableFields(of: makeResponse(200, fields).headerFields)
                            for requestTime in Self.extremeTimes {
                                for responseTime in Self.extremeTimes {
                                    let response = StoredResponse(
                                        status: .ok, fields: stored, requestTime: requestTime, responseTime: responseTime,
                                        varyValues: [], body: [])
                                    let lifetime = rules.freshnessLifetime(response)
                                    if lifetime < 0 || lifetime > maximumNanoseconds { outOfRange.append("lifetime \(lifetime): \(fields)") }
                                    _ = rules.isStorable(response, for: Self.extremeRequests[0])
                                    for now in Self.extremeTimes {
                                        let age = rules.currentAge(response, now: now)
                                        let served = rules.servedFields(response, now: now)[.age].flatMap { Int64($0) } ?? -1
                                        if age < 0 || served < 0 || served > CacheControl.maximumDeltaSeconds {
                                            outOfRange.append("age \(age), Age \(served): \(fields) at \(requestTime), \(responseTime), \(now)")
                                        }
                                        for request in Self.extremeRequests {
                                            _ = rules.decision(for: request, stored: response, now: now)
                                            _ = rules.mayServeStaleOnError(response, for: request, now: now, originUnreachable: true)
                                            checked += 1
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        #expect(outOfRange.isEmpty, "\(outOfRange.prefix(5))")
        #expect(checked == 2 * 11 * 2 * 4 * 5 * 4 * 4 * 4 * Self.extremeRequests.count)
    }

    /// A response dated centuries ago has an age past any lifetime: it is stale, not a crash.
    @Test func aResponseDatedCenturiesAgoIsStale() {
        for date in ["Mon, 01 Jan 0001 00:00:00 GMT", "Fri, 01 Jan 1700 00:00:00 GMT", "Mon, 01 Jan 1731 00:00:00 GMT"] {
            let response = stored([("Cache-Control", "max-age=60"), ("Date", date)])
            #expect(rules.currentAge(response, now: now) > 60 * 1_000_000_000)
            #expect(rules.decision(for: makeRequest(), stored: response, now: now) == .validate)
            #expect(rules.currentAge(response, now: .max) == .max)
        }
    }

    /// The regression test of issue #25, as a user meets it: an origin dates its response in 1700,
    /// and the next request for it through the same `HTTPCache` stopped the process with an
    /// arithmetic overflow. It is now a stale response, revalidated with the origin.
    @Test(arguments: ["Mon, 01 Jan 1700 00:00:00 GMT", "Mon, 01 Jan 1731 00:00:00 GMT", "Wed, 01 Jan 1800 00:00:00 GMT"])
    func anOriginDatingItsResponseCenturiesAgoCannotStopTheProcess(_ date: String) async throws {
        let clock = makeClock()
        let cache = try makeCache(clock: clock)
        let origin = TestOrigin(200, [("Cache-Control", "max-age=60"), ("Date", date)])
        let (first, _) = try await cache.get(makeRequest("/a"), origin)
        #expect(first.outcome == .miss)
        clock.advance(by: .seconds(3_600 * 24 * 365 * 100))
        let (second, body) = try await cache.get(makeRequest("/a"), origin)
        #expect(second.outcome != .hit)
        #expect(body == "hello")
        #expect(origin.count == 2)
    }
}
