import HTTPTypes

extension HTTPCacheRules {
    /// Fields a client's conditional request carries: the cache answers them itself from
    /// a stored response, so they are not forwarded when the cache validates or fills.
    static let conditionalFields: [HTTPField.Name] = [.ifNoneMatch, .ifModifiedSince, .ifMatch, .ifUnmodifiedSince, .ifRange]

    /// The request to send to validate `stored` (RFC 9111 §4.3.1): `request` without the
    /// client's conditionals, plus `If-None-Match` with the stored `ETag` and
    /// `If-Modified-Since` with the stored `Last-Modified`, when they exist.
    ///
    /// - Returns: The request, and whether it is conditional (the stored response has a validator).
    static func validationRequest(for request: HTTPRequest, stored: StoredResponse) -> (HTTPRequest, Bool) {
        var outgoing = withoutConditionals(request)
        var conditional = false
        if let etag = stored.etag {
            outgoing.headerFields[.ifNoneMatch] = etag
            conditional = true
        }
        if let lastModified = stored.lastModifiedText, stored.lastModified != nil {
            outgoing.headerFields[.ifModifiedSince] = lastModified
            conditional = true
        }
        return (outgoing, conditional)
    }

    /// `request` without the client's conditional fields.
    static func withoutConditionals(_ request: HTTPRequest) -> HTTPRequest {
        var outgoing = request
        for name in conditionalFields { outgoing.headerFields[name] = nil }
        return outgoing
    }

    /// The stored fields updated by a `304` (RFC 9111 §3.2): each field of the 304 replaces
    /// the stored fields of that name, except `Content-Length` and hop-by-hop fields.
    static func fieldsUpdated(_ stored: HTTPFields, with notModified: HTTPFields) -> HTTPFields {
        let update = storableFields(of: notModified)
        var replaced = Set<HTTPField.Name>()
        for field in update where field.name != .contentLength { replaced.insert(field.name) }
        var result = HTTPFields()
        for field in stored where !replaced.contains(field.name) { result.append(field) }
        for field in update where replaced.contains(field.name) { result.append(field) }
        return result
    }

    /// Whether the client's own conditional request is satisfied by `stored`, so the cache
    /// answers `304 Not Modified` (RFC 9110 §13.1.2, §13.1.3): `If-None-Match` by weak
    /// comparison takes precedence over `If-Modified-Since`.
    static func clientConditionMatches(_ request: HTTPRequest, stored: StoredResponse) -> Bool {
        guard request.method == .get || request.method == .head, stored.status.code == 200 else { return false }
        let ifNoneMatch = request.headerFields[values: .ifNoneMatch]
        if !ifNoneMatch.isEmpty {
            guard let etag = stored.etag else { return false }
            for line in ifNoneMatch {
                for member in line.split(separator: ",") {
                    let tag = member.trimmingSpaces
                    if tag == "*" || weakCompare(tag, etag) { return true }
                }
            }
            return false
        }
        if let since = request.headerFields[.ifModifiedSince].flatMap(HTTPDate.parse) {
            guard let modified = stored.lastModified ?? stored.date else { return false }
            return modified <= since
        }
        return false
    }

    /// Weak comparison of two entity-tags (RFC 9110 §8.8.3.2): equal opaque tags, either or both weak.
    ///
    /// Octet by octet, as the RFC compares them: not as Swift strings, which would take
    /// canonically equivalent tags for equal, and would not see the `W/` of a tag whose next
    /// scalar is a combining mark (`/` and the mark form one character).
    static func weakCompare(_ a: String, _ b: String) -> Bool {
        func opaque(_ tag: String) -> Substring.UTF8View {
            let bytes = Substring(tag).utf8
            return bytes.starts(with: "W/".utf8) ? bytes.dropFirst(2) : bytes
        }
        let left = opaque(a)
        return !left.isEmpty && left.elementsEqual(opaque(b))
    }

    /// The fields of a `304 Not Modified` answered from `fields` (RFC 9110 §15.4.5): those a 200
    /// would carry that describe validation and caching.
    static func notModifiedFields(_ fields: HTTPFields) -> HTTPFields {
        let kept: Set<HTTPField.Name> = [.cacheControl, .contentLocation, .date, .eTag, .expires, .vary, .age, .lastModified]
        var result = HTTPFields()
        for field in fields where kept.contains(field.name) { result.append(field) }
        return result
    }

    // MARK: - Invalidation

    /// Whether a request's method is unsafe, so a non-error response to it invalidates
    /// stored responses (RFC 9111 §4.4): anything but GET, HEAD, OPTIONS and TRACE.
    static func isUnsafe(_ method: HTTPRequest.Method) -> Bool {
        !(method == .get || method == .head || method == .options || method == .trace)
    }

    /// The URLs a response to an unsafe request invalidates: the target, and its `Location`
    /// and `Content-Location` when they have the target's origin. Empty for an error status.
    ///
    /// - Returns: `(scheme, authority, path-and-query)` triples.
    static func invalidatedTargets(request: HTTPRequest, response: HTTPResponse) -> [(String, String, String)] {
        guard isUnsafe(request.method), (200..<400).contains(response.status.code) else { return [] }
        let scheme = request.scheme?.lowercased() ?? "http"
        let authority = request.authority?.lowercased() ?? ""
        var targets = [(scheme, authority, request.path ?? "/")]
        for name in [HTTPField.Name.location, .contentLocation] {
            guard let value = response.headerFields[name]?.trimmingSpaces, !value.isEmpty else { continue }
            if value.hasPrefix("/") {
                if !value.hasPrefix("//") { targets.append((scheme, authority, value)) }
                continue
            }
            // An absolute URL counts only with the same scheme and authority.
            guard let schemeEnd = value.range(of: "://") else { continue }
            let otherScheme = value[..<schemeEnd.lowerBound].lowercased()
            let rest = value[schemeEnd.upperBound...]
            let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
            let otherAuthority = rest[..<authorityEnd].lowercased()
            guard otherScheme == scheme, otherAuthority == authority else { continue }
            let path = String(rest[authorityEnd...])
            targets.append((scheme, authority, path.isEmpty ? "/" : path.hasPrefix("?") ? "/" + path : path))
        }
        return targets
    }
}
