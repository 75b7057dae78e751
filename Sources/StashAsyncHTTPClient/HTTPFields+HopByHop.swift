#if AsyncHTTPClient
import HTTPTypes
import NIOHTTP1
import StashHTTP

extension HTTPFields {
    /// The end-to-end fields of NIO's `headers`, in their order: hop-by-hop fields, the fields that
    /// `Connection` names, `Host`, and lines whose name is not a valid token are left out.
    ///
    /// - Complexity: O(n) in the number of header lines.
    package init(endToEnd headers: HTTPHeaders) {
        self.init()
        reserveCapacity(headers.count)
        let connectionNames = Self.connectionOptions(headers["connection"])
        for (name, value) in headers {
            let lowered = name.lowercased()
            if lowered == "host" || Self.hopByHopNames.contains(lowered) || connectionNames.contains(lowered) {
                continue
            }
            guard let fieldName = HTTPField.Name(name) else { continue }
            append(HTTPField(name: fieldName, value: value))
        }
    }
}

#endif  // AsyncHTTPClient
