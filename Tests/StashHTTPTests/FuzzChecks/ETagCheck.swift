import HTTPTypes
@testable import StashHTTP

/// `FuzzETag`: entity-tags and `If-None-Match`. The input is LF-separated lines: the stored
/// `ETag`, then the request's `If-None-Match` lines.
///
/// Properties: weak comparison is symmetric, reflexive for any non-empty opaque tag, and ignores
/// a `W/` prefix (once: `W/W/"a"` is the opaque tag `W/"a"`); a `GET` whose `If-None-Match`
/// lists the stored tag (or `*`) matches a stored `200`, and one whose members all differ from
/// it does not.
package enum ETagCheck {
    package static func check(_ bytes: [UInt8]) throws(PropertyViolation) {
        let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        let etagText = HTTPField(name: .eTag, value: lines.first ?? "").value.trimmingSpaces
        let members = lines.dropFirst().map { HTTPField(name: .ifNoneMatch, value: $0).value }
        for member in members {
            let tag = member.trimmingSpaces
            guard HTTPCacheRules.weakCompare(tag, etagText) == HTTPCacheRules.weakCompare(etagText, tag) else {
                throw PropertyViolation("weak comparison is not symmetric: \(tag) and \(etagText)")
            }
        }
        guard !etagText.isEmpty, etagText != "W/" else { return }
        let strongForm = etagText.utf8.starts(with: "W/".utf8) ? String(Substring(etagText).utf8.dropFirst(2))! : etagText
        guard HTTPCacheRules.weakCompare(etagText, etagText), HTTPCacheRules.weakCompare("W/" + strongForm, etagText) else {
            throw PropertyViolation("\(etagText) does not weakly match itself or its weak form")
        }
        var fields = HTTPFields()
        fields[.eTag] = etagText
        let stored = StoredResponse(status: .ok, fields: fields, requestTime: 0, responseTime: 0, varyValues: [], body: [])
        guard let storedTag = stored.etag else { throw PropertyViolation("the stored ETag \(etagText) is lost") }
        func request(_ values: [String]) -> HTTPRequest {
            var request = HTTPRequest(method: .get, scheme: "https", authority: "example.com", path: "/")
            for value in values { request.headerFields.append(HTTPField(name: .ifNoneMatch, value: value)) }
            return request
        }
        if !storedTag.contains(","), !HTTPCacheRules.clientConditionMatches(request(members + [storedTag]), stored: stored) {
            throw PropertyViolation("If-None-Match listing \(storedTag) does not match it")
        }
        if !HTTPCacheRules.clientConditionMatches(request(members + ["*"]), stored: stored) {
            throw PropertyViolation("If-None-Match: * does not match a stored 200")
        }
        let matches = HTTPCacheRules.clientConditionMatches(request(members), stored: stored)
        let expected = members.contains { line in
            line.split(separator: ",").contains { member in
                let tag = member.trimmingSpaces
                return tag == "*" || HTTPCacheRules.weakCompare(tag, storedTag)
            }
        }
        guard matches == expected else {
            throw PropertyViolation("If-None-Match \(members) against \(storedTag): \(matches), expected \(expected)")
        }
    }
}
