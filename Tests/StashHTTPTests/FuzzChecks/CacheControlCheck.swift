@testable import StashHTTP

/// `FuzzCacheControl`: the input is the lines of a `Cache-Control` field, separated by LF.
///
/// `CacheControl` has no serialiser of its own, so the check writes one (each directive as
/// `name` or `name="value"`, with `"` and `\` escaped). Properties: the parsed directives
/// re-serialised parse to the same directives; every delta-seconds is within 0...2^31; the
/// Structured Fields validation (`CDN-Cache-Control`) and the `Age` parser never trap, and `Age`
/// is within 0...2^31.
package enum CacheControlCheck {
    package static func check(_ bytes: [UInt8]) throws(PropertyViolation) {
        let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        let parsed = CacheControl(lines: lines)
        let serialised = serialise(parsed)
        let reparsed = CacheControl(lines: [serialised])
        guard reparsed == parsed else {
            throw PropertyViolation("re-serialised as \(serialised.debugDescription), parses to \(reparsed.directives), not \(parsed.directives)")
        }
        for name in parsed.directives.keys {
            if let seconds = parsed.seconds(name), !(0...CacheControl.maximumDeltaSeconds).contains(seconds) {
                throw PropertyViolation("\(name) has \(seconds) seconds, outside 0...2^31")
            }
        }
        _ = CacheControl.isValidStructuredDictionary(lines)
        let age = StoredResponse.parseAge(lines)
        guard (0...CacheControl.maximumDeltaSeconds).contains(age) else {
            throw PropertyViolation("Age \(lines) parses to \(age), outside 0...2^31")
        }
    }

    /// The directives written back as one `Cache-Control` line, every value quoted.
    static func serialise(_ cacheControl: CacheControl) -> String {
        cacheControl.directives.map { name, value in
            guard let value else { return name }
            var quoted = "\""
            for character in value.unicodeScalars {
                if character == "\"" || character == "\\" { quoted.unicodeScalars.append("\\") }
                quoted.unicodeScalars.append(character)
            }
            return name + "=" + quoted + "\""
        }.joined(separator: ", ")
    }
}
