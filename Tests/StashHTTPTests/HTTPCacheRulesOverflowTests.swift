import HTTPTypes
import Testing
@testable import StashHTTP

/// Extreme values from the network clamp; they never overflow (a trap would kill the process).
@Suite struct HTTPCacheRulesOverflowTests {
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
}
