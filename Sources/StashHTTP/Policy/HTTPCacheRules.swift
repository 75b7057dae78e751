import HTTPTypes
import Stash

/// The RFC 9111 rules as pure functions of (request, stored response, now): no I/O,
/// no clock, no state. ``HTTPCache`` applies them; tests call them directly.
///
/// Times are nanoseconds since the Unix epoch; freshness lifetimes and ages are
/// computed in nanoseconds and sent in whole seconds.
struct HTTPCacheRules: Sendable {
    /// Private or shared.
    var mode: HTTPCacheMode
    /// The longest heuristic freshness lifetime, in seconds.
    var heuristicCap: Int64
    /// How long past expiry, in seconds, a stored response may serve when the origin cannot be
    /// reached (RFC 9111 §4.2.4's disconnected cache); 0 for never.
    var staleIfUnreachable: Int64 = 0

    /// Statuses that may be cached heuristically (RFC 9110 §15.1).
    static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]
    /// Statuses this cache understands, for `must-understand` (RFC 9111 §5.2.2.3).
    static let understood: Set<Int> = heuristicallyCacheable.union([302, 303, 307])
    /// Proxy credentials, never stored (besides the hop-by-hop fields, ``HTTPFields/hopByHopNames``).
    static let proxyCredentials: Set<String> = ["proxy-authenticate", "proxy-authentication-info", "proxy-authorization"]

    /// What the cache may do with a stored response for a request.
    enum Decision: Equatable {
        /// Serve it: it is fresh enough for the request.
        case fresh
        /// Serve it although stale: the request's `max-stale` allows it.
        case staleAllowed
        /// Serve it stale, and revalidate in the background (`stale-while-revalidate`).
        case staleWhileRevalidate
        /// Ask the origin first (conditionally when the response has a validator).
        case validate
    }

    /// The directives this cache obeys: in shared mode a valid `CDN-Cache-Control` replaces
    /// `Cache-Control` (RFC 9213); otherwise `Cache-Control`.
    func directives(_ response: StoredResponse) -> CacheControl {
        if mode.isShared, let cdn = response.cdnCacheControl { return cdn }
        return response.cacheControl
    }

    // MARK: - Storing

    /// Whether `response` to `request` may be stored (RFC 9111 §3), and is worth storing:
    /// it has a freshness lifetime, a validator or a stale-serving extension.
    ///
    /// - Complexity: O(n) in the number of header fields.
    func isStorable(_ response: StoredResponse, for request: HTTPRequest) -> Bool {
        guard request.method == .get || request.method == .head else { return false }
        let code = response.status.code
        guard code >= 200, code != 206, code != 304 else { return false }
        let requestCC = CacheControl(lines: request.headerFields[values: .cacheControl])
        if requestCC.contains("no-store") { return false }
        let cc = directives(response)
        if cc.contains("no-store") {
            guard cc.contains("must-understand"), Self.understood.contains(code) else { return false }
        }
        if cc.contains("must-understand"), !Self.understood.contains(code) { return false }
        if mode.isShared, cc.contains("private") { return false }
        if mode.isShared, request.headerFields[.authorization] != nil,
           !(cc.contains("public") || cc.contains("s-maxage") || cc.contains("must-revalidate")) {
            return false
        }
        guard let varyNames = Self.varyNames(response.fields), !varyNames.contains("*") else { return false }
        let explicit = cc.contains("public") || (!mode.isShared && cc.contains("private"))
            || response.expires != .absent || cc.contains("max-age") || (mode.isShared && cc.contains("s-maxage"))
        guard explicit || Self.heuristicallyCacheable.contains(code) else { return false }
        let useful = freshnessLifetime(response) > 0 || response.etag != nil || response.lastModified != nil
            || cc.contains("stale-while-revalidate") || cc.contains("stale-if-error")
        return useful
    }

    /// `fields` without hop-by-hop fields, the fields `Connection` names (RFC 9111 §3.1) and proxy
    /// credentials.
    ///
    /// - Complexity: O(n) in the number of fields.
    static func storableFields(of fields: HTTPFields) -> HTTPFields {
        var fields = fields
        fields.removeHopByHop(alsoRemoving: proxyCredentials)
        return fields
    }

    // MARK: - Freshness and age
    //
    // Every time here is an `Int64` of nanoseconds, and every input can be extreme: a `Date` in
    // the year 1 or 9999, `Age` and `max-age` at their parse limit (2^31 s), a stored entry's
    // times read from a damaged file, a clock at `Int64.max`. So every step saturates
    // (`addingClamped`, `subtractingClamped`, `multipliedClamped`) instead of trapping: an
    // overflow would stop the process, and any origin, or anyone between it and the cache, could
    // send the bytes that cause it. Saturating keeps each result's meaning: a response dated
    // centuries ago has an age past any lifetime, so it is stale; one dated in the far future has
    // an apparent age of 0. RFC 9111 §1.2.2 asks for the same: a delta-seconds or a calculation
    // that overflows counts as 2^31 or the greatest integer the cache can represent.

    /// Nanoseconds in a second.
    static let nanosecondsPerSecond: Int64 = 1_000_000_000

    /// The `Date` the rules use, in seconds since the epoch: the response's own, or when it has
    /// none (or an invalid one) the time it was received (RFC 9110 §6.6.1).
    func dateSeconds(_ response: StoredResponse) -> Int64 {
        response.date ?? response.responseTime / Self.nanosecondsPerSecond
    }

    /// The freshness lifetime in nanoseconds (RFC 9111 §4.2.1): `s-maxage` (shared mode),
    /// then `max-age`, then `Expires` − `Date`, then the heuristic. Never negative, and never
    /// more than 2^31 seconds.
    ///
    /// - Complexity: O(1).
    func freshnessLifetime(_ response: StoredResponse) -> Int64 {
        let cc = directives(response)
        if mode.isShared, let sMaxAge = cc.seconds("s-maxage") { return sMaxAge.multipliedClamped(by: Self.nanosecondsPerSecond) }
        if let maxAge = cc.seconds("max-age") { return maxAge.multipliedClamped(by: Self.nanosecondsPerSecond) }
        let date = dateSeconds(response)
        switch response.expires {
        case .invalid: return 0
        case .at(let expires):
            // Clamped like any delta-seconds (RFC 9111 §1.2.2), so a far-future Expires
            // (year 9999) is the longest lifetime, not an overflow.
            let seconds = min(max(0, expires.subtractingClamped(date)), CacheControl.maximumDeltaSeconds)
            return seconds.multipliedClamped(by: Self.nanosecondsPerSecond)
        case .absent: break
        }
        guard Self.heuristicallyCacheable.contains(response.status.code) || cc.contains("public"),
              let lastModified = response.lastModified, date > lastModified
        else { return 0 }
        // RFC 9111 §4.2.2: a fraction of the time since the last modification; 10 % is typical.
        let seconds = min(date.subtractingClamped(lastModified) / 10, heuristicCap, CacheControl.maximumDeltaSeconds)
        return seconds.multipliedClamped(by: Self.nanosecondsPerSecond)
    }

    /// The current age in nanoseconds (RFC 9111 §4.2.3): never negative, saturating at
    /// `Int64.max` (about 292 years) instead of overflowing.
    ///
    /// - Complexity: O(1).
    func currentAge(_ response: StoredResponse, now: Int64) -> Int64 {
        let dateNanos = dateSeconds(response).multipliedClamped(by: Self.nanosecondsPerSecond)
        let apparentAge = max(0, response.responseTime.subtractingClamped(dateNanos))
        let responseDelay = max(0, response.responseTime.subtractingClamped(response.requestTime))
        let correctedAgeValue = response.ageValue.multipliedClamped(by: Self.nanosecondsPerSecond).addingClamped(responseDelay)
        let correctedInitialAge = max(apparentAge, correctedAgeValue)
        let residentTime = max(0, now.subtractingClamped(response.responseTime))
        return correctedInitialAge.addingClamped(residentTime)
    }

    /// How long past its freshness lifetime `response` is at `now`, in nanoseconds; negative
    /// while it is fresh.
    ///
    /// - Complexity: O(1).
    func staleness(_ response: StoredResponse, now: Int64) -> Int64 {
        currentAge(response, now: now).subtractingClamped(freshnessLifetime(response))
    }

    /// Whether the response forbids serving it stale (RFC 9111 §5.2.2.2, §5.2.2.8, §5.2.2.10).
    func forbidsStale(_ response: StoredResponse) -> Bool {
        let cc = directives(response)
        return cc.contains("must-revalidate") || cc.contains("no-cache")
            || (mode.isShared && (cc.contains("proxy-revalidate") || cc.contains("s-maxage")))
    }

    // MARK: - Reuse

    /// What the cache may do with `response` for `request` at `now`, under the protocol's rules.
    ///
    /// - Complexity: O(n) in the request's `Cache-Control` length.
    func decision(for request: HTTPRequest, stored response: StoredResponse, now: Int64) -> Decision {
        let requestCC = Self.requestCacheControl(request)
        if requestCC.contains("no-cache") || directives(response).contains("no-cache") { return .validate }
        let age = currentAge(response, now: now)
        let lifetime = freshnessLifetime(response)
        var fresh = lifetime > age
        if let maxAge = requestCC.seconds("max-age"), age > maxAge.multipliedClamped(by: Self.nanosecondsPerSecond) {
            fresh = false
        }
        if let minFresh = requestCC.seconds("min-fresh"),
           lifetime.subtractingClamped(age) < minFresh.multipliedClamped(by: Self.nanosecondsPerSecond) {
            fresh = false
        }
        if fresh { return .fresh }
        if forbidsStale(response) { return .validate }
        let staleness = age.subtractingClamped(lifetime)
        if requestCC.contains("max-stale") {
            // `max-stale` with no value accepts any staleness (RFC 9111 §5.2.1.2).
            let maxStale = requestCC.value("max-stale") == nil ? Int64.max : requestCC.seconds("max-stale") ?? 0
            if maxStale == .max || staleness <= maxStale.multipliedClamped(by: Self.nanosecondsPerSecond) { return .staleAllowed }
        }
        if let window = directives(response).seconds("stale-while-revalidate"),
           staleness <= window.multipliedClamped(by: Self.nanosecondsPerSecond) {
            return .staleWhileRevalidate
        }
        return .validate
    }

    /// Whether a stale `response` may be served because the origin failed: within RFC 5861
    /// `stale-if-error` (from the response or the request), or, when the origin could not be
    /// reached at all (`originUnreachable`: no connection, the connection closed, or a timeout,
    /// rather than an error status), within ``staleIfUnreachable``. Never when the response
    /// forbids serving stale (`must-revalidate`, `no-cache`; in shared mode `proxy-revalidate`
    /// and `s-maxage`).
    func mayServeStaleOnError(_ response: StoredResponse, for request: HTTPRequest, now: Int64, originUnreachable: Bool = false) -> Bool {
        if forbidsStale(response) { return false }
        let staleness = self.staleness(response, now: now)
        if staleness <= 0 { return true }
        let window = max(
            directives(response).seconds("stale-if-error") ?? -1,
            Self.requestCacheControl(request).seconds("stale-if-error") ?? -1,
            originUnreachable && staleIfUnreachable > 0 ? staleIfUnreachable : -1)
        return window >= 0 && staleness <= window.multipliedClamped(by: Self.nanosecondsPerSecond)
    }

    /// The request's `Cache-Control`, or `no-cache` when it has none and `Pragma` says
    /// `no-cache` (RFC 9111 §5.4); other `Pragma` values are ignored.
    static func requestCacheControl(_ request: HTTPRequest) -> CacheControl {
        let lines = request.headerFields[values: .cacheControl]
        if !lines.isEmpty { return CacheControl(lines: lines) }
        let pragma = request.headerFields[values: .pragmaField]
        if !pragma.isEmpty, CacheControl(lines: pragma).contains("no-cache") { return CacheControl(lines: ["no-cache"]) }
        return CacheControl(lines: [])
    }

    // MARK: - Responses built from a stored one

    /// The stored response as sent to a client: its fields with `Age` set to the current age in
    /// seconds, at most 2^31 (RFC 9111 §1.2.2). `Date` is left as the origin sent it.
    func servedFields(_ response: StoredResponse, now: Int64) -> HTTPFields {
        var fields = response.fields
        let ageSeconds = min(currentAge(response, now: now) / Self.nanosecondsPerSecond, CacheControl.maximumDeltaSeconds)
        fields[.age] = String(ageSeconds)
        return fields
    }
}

extension HTTPField.Name {
    /// `Pragma` (RFC 9111 §5.4), which HTTPTypes does not name.
    static let pragmaField = HTTPField.Name("Pragma")!
}
