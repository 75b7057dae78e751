import HTTPTypes

/// A stored response with the values the policy needs, parsed once when it is
/// stored or loaded, so a hit parses nothing of the response again.
///
/// Immutable; a `final class` so the memory tier shares one copy per entry.
final class StoredResponse: Sendable {
    /// The status code and reason phrase.
    let status: HTTPResponse.Status
    /// The stored header fields: end-to-end only (see ``HTTPCacheRules/storableFields(of:)``).
    let fields: HTTPFields
    /// When the request that produced this response was sent, in nanoseconds since the epoch.
    let requestTime: Int64
    /// When the response was received, in nanoseconds since the epoch.
    let responseTime: Int64
    /// The normalised values of the request fields that `Vary` names, by lower-cased name,
    /// sorted by name; `nil` for a field the request did not carry.
    let varyValues: [VaryValue]
    /// The body.
    let body: [UInt8]

    // Derived from `fields` at init.
    let cacheControl: CacheControl
    /// `CDN-Cache-Control` (RFC 9213) when present and valid: replaces ``cacheControl`` in shared mode.
    let cdnCacheControl: CacheControl?
    /// `Date` in seconds since the epoch, `nil` when absent or invalid.
    let date: Int64?
    /// `Expires`: absent, valid, or invalid (which means "already expired").
    let expires: Expires
    /// `Last-Modified` in seconds since the epoch, `nil` when absent or invalid.
    let lastModified: Int64?
    /// The raw `Last-Modified` line, for `If-Modified-Since`.
    let lastModifiedText: String?
    /// `Age` in seconds, 0 when absent or invalid.
    let ageValue: Int64
    /// The entity-tag, as sent.
    let etag: String?

    enum Expires: Sendable, Equatable {
        case absent
        case invalid
        case at(Int64)
    }

    struct VaryValue: Sendable, Equatable {
        let name: String
        let value: String?
    }

    init(
        status: HTTPResponse.Status, fields: HTTPFields, requestTime: Int64, responseTime: Int64,
        varyValues: [VaryValue], body: [UInt8]
    ) {
        self.status = status
        self.fields = fields
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.varyValues = varyValues
        self.body = body
        cacheControl = CacheControl(lines: fields[values: .cacheControl])
        let cdnLines = fields[values: .cdnCacheControl]
        cdnCacheControl = !cdnLines.isEmpty && CacheControl.isValidStructuredDictionary(cdnLines)
            ? CacheControl(lines: cdnLines) : nil
        let dateLines = fields[values: .date]
        date = dateLines.count == 1 ? HTTPDate.parse(dateLines[0]) : nil
        let expiresLines = fields[values: .expires]
        if expiresLines.isEmpty {
            expires = .absent
        } else if expiresLines.count == 1, let at = HTTPDate.parse(expiresLines[0]) {
            expires = .at(at)
        } else {
            expires = .invalid
        }
        let lastModifiedLines = fields[values: .lastModified]
        lastModifiedText = lastModifiedLines.first
        lastModified = lastModifiedLines.count == 1 ? HTTPDate.parse(lastModifiedLines[0]) : nil
        ageValue = Self.parseAge(fields[values: .age])
        let etags = fields[values: .eTag]
        etag = etags.count == 1 ? etags[0].trimmingSpaces : nil
    }

    /// The `Age` value (RFC 9111 §5.1): the first member of the first line, when it is
    /// all digits; anything else is ignored (0). Clamped to 2^31.
    static func parseAge(_ lines: [String]) -> Int64 {
        guard let first = lines.first else { return 0 }
        let member = first.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).first.map { $0.trimmingSpaces } ?? ""
        guard !member.isEmpty, member.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return 0 }
        return CacheControl.leadingDeltaSeconds(member) ?? 0
    }

    /// A copy with other fields and times (a 304's update), the same body and variant.
    func updating(fields: HTTPFields, requestTime: Int64, responseTime: Int64) -> StoredResponse {
        StoredResponse(
            status: status, fields: fields, requestTime: requestTime, responseTime: responseTime,
            varyValues: varyValues, body: body)
    }

    /// The bytes this entry costs in memory, roughly: the body plus the fields.
    var cost: Int {
        fields.reduce(body.count + 64) { $0 + $1.name.rawName.utf8.count + $1.value.utf8.count + 4 }
    }
}

extension HTTPField.Name {
    /// `CDN-Cache-Control` (RFC 9213).
    static let cdnCacheControl = HTTPField.Name("CDN-Cache-Control")!
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    package var trimmingSpaces: String {
        var bytes = Substring(self).utf8[...]
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes = bytes.dropFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes = bytes.dropLast() }
        return String(decoding: bytes, as: UTF8.self)
    }
}
