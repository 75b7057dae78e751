#if AsyncHTTPClient
import HTTPTypes
import NIOHTTP1

extension HTTPFields {
    /// The hop-by-hop fields of RFC 9110 §7.6.1 that never cross a proxy, lower-cased.
    ///
    /// `Proxy-Connection` and `Keep-Alive` are obsolete but still sent by old clients.
    package static let hopByHopNames: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
    ]

    /// The end-to-end fields of NIO's `headers`, in their order: hop-by-hop fields, the fields that
    /// `Connection` names, `Host`, and lines whose name is not a valid token are left out.
    ///
    /// - Complexity: O(n) in the number of header lines.
    package init(endToEnd headers: HTTPHeaders) {
        self.init()
        reserveCapacity(headers.count)
        var connectionNames: Set<String> = []
        for value in headers[canonicalForm: "connection"] {
            connectionNames.insert(value.trimmingSpaces().lowercased())
        }
        for (name, value) in headers {
            let lowered = name.lowercased()
            if lowered == "host" || Self.hopByHopNames.contains(lowered) || connectionNames.contains(lowered) {
                continue
            }
            guard let fieldName = HTTPField.Name(name) else { continue }
            append(HTTPField(name: fieldName, value: value))
        }
    }

    /// Removes the hop-by-hop fields and the fields that `Connection` names.
    ///
    /// - Complexity: O(n) in the number of fields.
    package mutating func removeHopByHop() {
        var names = Self.hopByHopNames
        for value in self[values: .connection] {
            for part in value.split(separator: ",") {
                names.insert(part.trimmingSpaces().lowercased())
            }
        }
        if !contains(where: { names.contains($0.name.canonicalName) }) { return }
        self = HTTPFields(filter { !names.contains($0.name.canonicalName) })
    }
}

extension HTTPHeaders {
    /// NIO headers holding `fields` line by line, in their order.
    ///
    /// - Complexity: O(n) in the number of fields.
    package init(_ fields: HTTPFields) {
        self.init()
        reserveCapacity(fields.count)
        for field in fields {
            add(name: field.name.rawName, value: field.value)
        }
    }
}

extension Substring {
    /// The substring without leading and trailing spaces and tabs.
    func trimmingSpaces() -> Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" { result.removeFirst() }
        while let last = result.last, last == " " || last == "\t" { result.removeLast() }
        return result
    }
}

#endif  // AsyncHTTPClient
