import HTTPTypes
@testable import StashHTTP

/// A stored response and a request built from a fuzzer's input, for the checks of the policy.
///
/// Layout: a flags byte (bit 0: shared mode; bits 1-2: the method; bit 3: times near 2026 rather
/// than any `Int64`), a status byte, three `Int64` times (request sent, response received, now),
/// then text: the response's header lines (`Name: value`), an empty line, the request's.
struct FuzzedExchange {
    let rules: HTTPCacheRules
    let request: HTTPRequest
    let responseFields: HTTPFields
    let status: HTTPResponse.Status
    let requestTime: Int64
    let responseTime: Int64
    let now: Int64

    static let statuses = [200, 203, 204, 206, 300, 301, 302, 303, 304, 307, 308, 404, 405, 410, 414, 500, 501, 503, 599, 100]

    init(_ bytes: [UInt8]) {
        var reader = FuzzReader(bytes)
        let flags = reader.byte()
        let statusByte = reader.byte()
        var times = (reader.int64(), reader.int64(), reader.int64())
        if flags & 8 != 0 {
            // Seconds within about 18 hours of 2026-01-01, in nanoseconds.
            let base: Int64 = 1_767_225_600 * 1_000_000_000
            func near(_ raw: Int64) -> Int64 { base + (raw % 65_536) * 1_000_000_000 }
            times = (near(times.0), near(times.1), near(times.2))
        }
        (requestTime, responseTime, now) = times
        rules = HTTPCacheRules(mode: flags & 1 == 0 ? .private : .shared, heuristicCap: 86_400)
        status = HTTPResponse.Status(code: Self.statuses[Int(statusByte) % Self.statuses.count])
        let text = reader.rest()
        let sections = text.split(separator: "\n\n", maxSplits: 1, omittingEmptySubsequences: false)
        responseFields = Self.fields(sections.first ?? "")
        let method: HTTPRequest.Method = [.get, .head, .post, .options][Int(flags >> 1) & 3]
        request = HTTPRequest(
            method: method, scheme: "https", authority: "example.com", path: "/",
            headerFields: Self.fields(sections.count > 1 ? sections[1] : ""))
    }

    /// `Name: value` lines; a line without a valid name is skipped.
    static func fields(_ text: Substring) -> HTTPFields {
        var fields = HTTPFields()
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":"), let name = HTTPField.Name(String(line[..<colon])) else { continue }
            fields.append(HTTPField(name: name, value: String(line[line.index(after: colon)...]).trimmingSpaces))
        }
        return fields
    }

    /// The stored response, its `Vary` values taken from `request` as the store does.
    func storedResponse(body: [UInt8] = []) -> StoredResponse {
        let names = HTTPCacheRules.varyNames(responseFields) ?? ["*"]
        return StoredResponse(
            status: status, fields: responseFields, requestTime: requestTime, responseTime: responseTime,
            varyValues: HTTPCacheRules.varyValues(names: names, request: request), body: body)
    }
}
