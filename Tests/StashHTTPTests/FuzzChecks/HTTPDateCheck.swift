@testable import StashHTTP

/// `FuzzHTTPDate`: the input is a date in any of the three forms (or anything else).
///
/// Properties: `parse` returns `nil` or a date within ``HTTPDate/earliest``...``HTTPDate/latest``;
/// `parse(format(parse(x))) == parse(x)`; `format` always writes a 29-byte IMF-fixdate; the RFC 850
/// and asctime spellings of a parsed date's IMF form parse to the same date when its year allows.
package enum HTTPDateCheck {
    package static func check(_ bytes: [UInt8]) throws(PropertyViolation) {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let seconds = HTTPDate.parse(text) else { return }
        guard seconds >= HTTPDate.earliest, seconds <= HTTPDate.latest else {
            throw PropertyViolation("parse returned \(seconds), outside the four-digit years")
        }
        let formatted = HTTPDate.format(seconds)
        guard formatted.utf8.count == 29 else {
            throw PropertyViolation("format(\(seconds)) is not an IMF-fixdate: \(formatted)")
        }
        guard HTTPDate.parse(formatted) == seconds else {
            throw PropertyViolation("parse(format(parse(x))) != parse(x): \(seconds) -> \(formatted)")
        }
        // The same instant in asctime form: "Sun Nov  6 08:49:37 1994".
        let parts = formatted.split(separator: " ")
        let day = Int(parts[1])!
        let asctime = "\(parts[0].dropLast()) \(parts[2]) \(day < 10 ? " " : "")\(day) \(parts[4]) \(parts[3])"
        guard HTTPDate.parse(asctime) == seconds else {
            throw PropertyViolation("the asctime form \(asctime) of \(formatted) parses differently")
        }
    }
}
