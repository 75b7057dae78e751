@testable import StashHTTP

/// The fuzzed property of HTTP dates: `parse(format(parse(x))) == parse(x)`.
package enum HTTPDateCheck {
    package static func check(_ bytes: [UInt8]) throws(PropertyViolation) {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let seconds = HTTPDate.parse(text) else { return }
        let formatted = HTTPDate.format(seconds)
        guard HTTPDate.parse(formatted) == seconds else {
            throw PropertyViolation("parse(format(parse(x))) != parse(x): \(seconds) -> \(formatted)")
        }
    }
}

package struct PropertyViolation: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
