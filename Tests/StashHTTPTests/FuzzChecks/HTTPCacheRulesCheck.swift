import HTTPTypes
@testable import StashHTTP

/// `FuzzHTTPCacheRules`: the whole decision on a fuzzed stored response and request
/// (``FuzzedExchange`` gives the layout), including the freshness fields (`Cache-Control`,
/// `CDN-Cache-Control`, `Expires`, `Date`, `Age`, `Last-Modified`).
///
/// Properties: the parsed freshness fields are in range (`Age` and delta-seconds within
/// 0...2^31, dates within the four-digit years); ages are never negative and lifetimes within
/// 0...2^31 s; nothing is storable that the request's or the response's `no-store` forbids, or
/// that `Vary: *` makes unmatchable, and such a response never matches a request; `no-cache`
/// always means `validate`; `fresh` only when the lifetime exceeds the age; a response that
/// forbids serving stale is never served stale on error; the served `Age` is digits within
/// 0...2^31. A `Range` answered from a stored body (of a length taken from the request time) is
/// a non-empty part within the body, or a `416` for that length; never a part of a response
/// that is not a `200`, nor without a `Range`.
package enum HTTPCacheRulesCheck {
    package static func check(_ bytes: [UInt8]) throws(PropertyViolation) {
        let exchange = FuzzedExchange(bytes)
        let rules = exchange.rules
        let request = exchange.request
        let response = exchange.storedResponse()
        let limit = CacheControl.maximumDeltaSeconds

        // The freshness fields, as parsed.
        guard (0...limit).contains(response.ageValue) else { throw PropertyViolation("Age \(response.ageValue)") }
        for date in [response.date, response.lastModified, { if case .at(let at) = response.expires { at } else { nil } }()] {
            if let date, !(HTTPDate.earliest...HTTPDate.latest).contains(date) { throw PropertyViolation("a date at \(date)") }
        }

        // Ages and lifetimes.
        let age = rules.currentAge(response, now: exchange.now)
        let lifetime = rules.freshnessLifetime(response)
        guard age >= 0 else { throw PropertyViolation("a negative age \(age)") }
        guard lifetime >= 0, lifetime <= limit * HTTPCacheRules.nanosecondsPerSecond else {
            throw PropertyViolation("a lifetime of \(lifetime) ns")
        }
        _ = rules.staleness(response, now: exchange.now)

        // Storing.
        let cc = rules.directives(response)
        let requestNoStore = CacheControl(lines: request.headerFields[values: .cacheControl]).contains("no-store")
        let responseNoStore = cc.contains("no-store")
            && !(cc.contains("must-understand") && HTTPCacheRules.understood.contains(response.status.code))
        let varyNames = HTTPCacheRules.varyNames(exchange.responseFields)
        let varyStar = varyNames == nil || varyNames!.contains("*")
        let storable = rules.isStorable(response, for: request)
        if storable, requestNoStore || responseNoStore || varyStar {
            throw PropertyViolation("storable despite no-store (request \(requestNoStore), response \(responseNoStore)) or Vary: * (\(varyStar))")
        }
        if varyStar, HTTPCacheRules.varyMatches(response, request: request) {
            throw PropertyViolation("a response with Vary: * matches a request")
        }

        // Reuse.
        let decision = rules.decision(for: request, stored: response, now: exchange.now)
        if HTTPCacheRules.requestCacheControl(request).contains("no-cache") || cc.contains("no-cache"), decision != .validate {
            throw PropertyViolation("no-cache, yet the decision is \(decision)")
        }
        if decision == .fresh, lifetime <= age {
            throw PropertyViolation("fresh with a lifetime of \(lifetime) ns at an age of \(age) ns")
        }
        if rules.forbidsStale(response), decision == .staleAllowed || decision == .staleWhileRevalidate {
            throw PropertyViolation("\(decision) for a response that forbids serving stale")
        }
        if rules.forbidsStale(response), rules.mayServeStaleOnError(response, for: request, now: exchange.now, originUnreachable: true) {
            throw PropertyViolation("served stale on error although it forbids serving stale")
        }
        let served = rules.servedFields(response, now: exchange.now)
        guard let ageText = served[.age], let served = Int64(ageText), ageText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              (0...limit).contains(served) else {
            throw PropertyViolation("the served Age is \(String(describing: served[.age]))")
        }
        _ = HTTPCacheRules.validationRequest(for: request, stored: response)
        _ = HTTPCacheRules.clientConditionMatches(request, stored: response)
        try checkRange(exchange)
    }

    /// The range properties, on the stored response with a body.
    static func checkRange(_ exchange: FuzzedExchange) throws(PropertyViolation) {
        let length = Int(truncatingIfNeeded: exchange.requestTime & 0xFFF)
        let response = exchange.storedResponse(body: [UInt8](repeating: 0x61, count: length))
        switch HTTPCacheRules.byteRange(for: exchange.request, stored: response) {
        case nil:
            break
        case .some(_) where response.status.code != 200 || exchange.request.headerFields[.range] == nil:
            throw PropertyViolation("a range answer for status \(response.status.code) or without Range")
        case .part(let range):
            guard range.lowerBound >= 0, range.upperBound < length else {
                throw PropertyViolation("the part \(range) of a body of \(length) bytes")
            }
            let fields = HTTPCacheRules.partialContentFields(response.fields, range: range, length: length)
            guard fields[.contentLength] == String(range.count) else { throw PropertyViolation("Content-Length of \(range)") }
        case .unsatisfiable(let answered):
            guard answered == length else { throw PropertyViolation("416 for \(answered) bytes of \(length)") }
        }
    }
}
