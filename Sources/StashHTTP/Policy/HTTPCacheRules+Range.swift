import HTTPTypes

/// What a `Range` request gets from a stored complete response (RFC 9110 §14).
enum ByteRangeAnswer: Equatable, Sendable {
    /// `206 Partial Content` with these byte offsets of the stored body, both inclusive.
    case part(ClosedRange<Int>)
    /// `416 Range Not Satisfiable`: no byte of the range lies in a body of this length.
    case unsatisfiable(length: Int)
}

extension HTTPCacheRules {
    /// Whether a `Range` request may be answered from `stored` (the whole `200` representation,
    /// as the cache stores it): its status is `200`, the origin did not say `Accept-Ranges: none`
    /// (RFC 9110 §14.3), and its body is the representation's bytes as sent, with no
    /// `Content-Encoding` that a client (URLSession's libcurl) may have decoded, which would make
    /// the stored bytes and the origin's byte offsets differ. Otherwise a `Range` request goes to
    /// the origin.
    static func servesRanges(from stored: StoredResponse) -> Bool {
        guard stored.status.code == 200 else { return false }
        let acceptRanges = stored.fields[values: .acceptRanges].flatMap { $0.split(separator: ",") }
        guard !acceptRanges.contains(where: { $0.trimmingSpaces.lowercased() == "none" }) else { return false }
        return stored.fields[values: .contentEncoding].allSatisfy { line in
            line.split(separator: ",").allSatisfy { $0.trimmingSpaces.lowercased() == "identity" }
        }
    }

    /// Whether a `Range` request carries `If-Match` or `If-Unmodified-Since`: preconditions the
    /// cache does not evaluate (RFC 9111 §4.3.2 leaves them to the origin), which RFC 9110 §13.2.2
    /// evaluates before the range. Such a request goes to the origin, which answers `412` when the
    /// representation changed: a part of the stored one could be spliced onto a part of another
    /// by a client resuming a download.
    static func hasOriginPreconditions(_ request: HTTPRequest) -> Bool {
        request.headerFields[.ifMatch] != nil || request.headerFields[.ifUnmodifiedSince] != nil
    }

    /// The part of `stored` that `request`'s `Range` asks for, or `nil` when the whole response
    /// answers: no `Range`, an `If-Range` that `stored` does not match (RFC 9110 §13.1.5), or a
    /// `Range` the cache ignores (RFC 9110 §14.2 lets it: not `bytes`, invalid, or several ranges,
    /// which would need `multipart/byteranges`).
    static func byteRange(for request: HTTPRequest, stored: StoredResponse) -> ByteRangeAnswer? {
        // Every hit passes here: a request without `Range` returns before anything is allocated.
        guard request.method == .get, request.headerFields[.range] != nil else { return nil }
        let lines = request.headerFields[values: .range]
        guard lines.count == 1, servesRanges(from: stored) else { return nil }
        let ifRange = request.headerFields[values: .ifRange]
        if !ifRange.isEmpty {
            guard ifRange.count == 1, ifRangeMatches(ifRange[0], stored: stored) else { return nil }
        }
        return parseByteRange(lines[0], length: stored.body.count)
    }

    /// `If-Range` (RFC 9110 §13.1.5): an entity-tag matches the stored strong `ETag` by strong
    /// comparison; a date matches a `Last-Modified` that is the same instant and a strong
    /// validator (at least a second before the response's `Date`, RFC 9110 §8.8.2.2).
    static func ifRangeMatches(_ value: String, stored: StoredResponse) -> Bool {
        let value = value.trimmingSpaces
        if value.hasPrefix("\"") || value.hasPrefix("W/") {
            guard let etag = stored.etag, !value.hasPrefix("W/"), !etag.hasPrefix("W/") else { return false }
            return value.utf8.elementsEqual(etag.utf8)
        }
        guard let date = HTTPDate.parse(value), let lastModified = stored.lastModified,
              let responseDate = stored.date
        else { return false }
        return lastModified == date && lastModified < responseDate
    }

    /// Parses a `Range` value (RFC 9110 §14.1.1) against a representation of `length` bytes.
    ///
    /// `bytes=first-last`, `bytes=first-` and `bytes=-suffix`, with the unit in any case and
    /// spaces around the range. A last position past the end is the end; a first position at or
    /// past the end, or a suffix of 0, is ``ByteRangeAnswer/unsatisfiable(length:)``; a suffix of
    /// an empty body is the whole (empty) body, `nil`. Numbers of
    /// any length are read without overflow (saturating).
    ///
    /// - Returns: `nil` for a value the cache ignores: another unit, invalid syntax, a last
    ///   position before the first, or more than one range.
    /// - Complexity: O(value length).
    static func parseByteRange(_ value: String, length: Int) -> ByteRangeAnswer? {
        let value = value.trimmingSpaces
        guard let equals = value.utf8.firstIndex(of: UInt8(ascii: "=")) else { return nil }
        guard value[..<equals].lowercased() == "bytes" else { return nil }
        let set = value[value.utf8.index(after: equals)...]
        guard !set.utf8.contains(UInt8(ascii: ",")) else { return nil }
        let spec = set.trimmingSpaces.utf8
        guard let dash = spec.firstIndex(of: UInt8(ascii: "-")) else { return nil }
        let first = Self.position(spec[..<dash])
        let last = Self.position(spec[spec.index(after: dash)...])
        switch (first, last) {
        case (.some(let first), .some(let last)):
            guard first <= last else { return nil }
            guard first < length else { return .unsatisfiable(length: length) }
            return .part(first...min(last, length - 1))
        case (.some(let first), nil) where spec.index(after: dash) == spec.endIndex:
            guard first < length else { return .unsatisfiable(length: length) }
            return .part(first...(length - 1))
        case (nil, .some(let suffix)) where dash == spec.startIndex:
            guard suffix > 0 else { return .unsatisfiable(length: length) }
            // An empty body has no part to send: the whole (empty) response answers.
            guard length > 0 else { return nil }
            return .part(max(0, length - suffix)...(length - 1))
        default:
            return nil
        }
    }

    /// A run of ASCII digits as a non-negative number, saturating at `Int.max`; `nil` when empty
    /// or anything but digits.
    private static func position(_ digits: Substring.UTF8View) -> Int? {
        guard !digits.isEmpty else { return nil }
        var result = 0
        for byte in digits {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            let (times10, overflow1) = result.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int(byte - 0x30))
            if overflow1 || overflow2 { return Int.max }
            result = sum
        }
        return result
    }

    /// The fields of a `206` answer of `range` from a stored body of `length` bytes: `fields`
    /// with `Content-Range` and the part's `Content-Length` (RFC 9110 §15.3.7), without the digests
    /// of the whole body (`Content-Digest`, RFC 9530 §2, and the obsolete `Content-MD5`), which
    /// would not match the part.
    static func partialContentFields(_ fields: HTTPFields, range: ClosedRange<Int>, length: Int) -> HTTPFields {
        var fields = fields
        fields[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound)/\(length)"
        fields[.contentLength] = String(range.count)
        fields[.contentDigest] = nil
        fields[.contentMD5] = nil
        return fields
    }

    /// The fields of a `416` answer for a body of `length` bytes (RFC 9110 §15.5.17), sent at
    /// `date` (seconds since the epoch; RFC 9110 §6.6.1 asks a `Date` of a 4xx).
    static func rangeNotSatisfiableFields(length: Int, date: Int64) -> HTTPFields {
        var fields = HTTPFields()
        fields[.date] = HTTPDate.format(date)
        fields[.contentRange] = "bytes */\(length)"
        fields[.contentLength] = "0"
        return fields
    }
}

extension HTTPField.Name {
    /// `Content-Digest` (RFC 9530).
    static let contentDigest = HTTPField.Name("Content-Digest")!
    /// `Content-MD5` (RFC 1864, obsolete): a digest of the whole body.
    static let contentMD5 = HTTPField.Name("Content-MD5")!
}
