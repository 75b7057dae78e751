import HTTPTypes
@testable import StashHTTP

/// `FuzzVary`: `Vary` and the secondary key (the normalised values of the fields it names), on a
/// fuzzed response and request (``FuzzedExchange`` gives the layout); and the primary key.
///
/// Properties: `varyNames` is `nil`-free here and either `["*"]` or sorted, unique, lower-case
/// valid field names; a response stored for a request matches that same request (unless `*`)
/// and never matches any request when it varies on `*`; the members of an `Accept-*` field
/// match in any order; the primary key ignores the case of the scheme and authority and a
/// default port.
package enum VaryCheck {
    package static func check(_ bytes: [UInt8]) throws(PropertyViolation) {
        let exchange = FuzzedExchange(bytes)
        guard let names = HTTPCacheRules.varyNames(exchange.responseFields) else {
            throw PropertyViolation("varyNames returned nil")
        }
        let stored = exchange.storedResponse()
        if names.contains("*") {
            guard names == ["*"] else { throw PropertyViolation("* among other names: \(names)") }
            guard !HTTPCacheRules.varyMatches(stored, request: exchange.request) else {
                throw PropertyViolation("Vary: * matched a request")
            }
        } else {
            guard names == Array(Set(names)).sorted(), names.allSatisfy({ !$0.isEmpty && $0 == $0.lowercased() && HTTPField.Name($0) != nil }) else {
                throw PropertyViolation("Vary names not sorted, unique, lower-case valid names: \(names)")
            }
            guard HTTPCacheRules.varyMatches(stored, request: exchange.request) else {
                throw PropertyViolation("a response does not match the request it was stored for (Vary \(names))")
            }
            // The same request with each Accept-* field's members reversed matches too.
            var reordered = exchange.request
            for name in HTTPCacheRules.unorderedFields {
                let field = HTTPField.Name(name)!
                let lines = exchange.request.headerFields[values: field]
                guard !lines.isEmpty else { continue }
                let members = lines.flatMap { $0.split(separator: ",") }.reversed()
                reordered.headerFields[field] = members.joined(separator: ",")
            }
            guard HTTPCacheRules.varyMatches(stored, request: reordered) else {
                throw PropertyViolation("Accept-* members in another order do not match (Vary \(names))")
            }
        }
        // The primary key.
        let authority = exchange.request.headerFields[HTTPField.Name("X-Authority")!] ?? "example.com"
        let key = HTTPCacheEngine.key(method: .get, scheme: "https", authority: authority.lowercased(), path: "/p")
        guard key == HTTPCacheEngine.key(method: .get, scheme: "HTTPS", authority: authority.uppercased(), path: "/p"),
              HTTPCacheEngine.key(method: .get, scheme: "https", authority: authority + ":443", path: "/p")
                == HTTPCacheEngine.key(method: .get, scheme: "https", authority: authority, path: "/p") else {
            throw PropertyViolation("the primary key depends on case or a default port: \(key)")
        }
    }
}
