#if AsyncHTTPClient
import AsyncHTTPClient
import HTTPTypes
import NIOHTTP1

extension HTTPRequest {
    /// The HTTPTypes request for an AsyncHTTPClient request: method, scheme, authority and
    /// path with query from its absolute URL (the fragment dropped), and its end-to-end header lines.
    ///
    /// - Throws: ``CachingHTTPClientError`` with `.invalidRequest` when the URL has no scheme or
    ///   host, or the method is not a token.
    /// - Complexity: O(n) in the URL's length and the number of header lines.
    package init(_ request: HTTPClientRequest) throws(CachingHTTPClientError) {
        let url = request.url
        guard let schemeEnd = url.range(of: "://"), !url[..<schemeEnd.lowerBound].isEmpty else {
            throw CachingHTTPClientError(code: .invalidRequest, message: "not an absolute URL: \(url)")
        }
        let scheme = url[..<schemeEnd.lowerBound].lowercased()
        var rest = url[schemeEnd.upperBound...]
        if let hash = rest.firstIndex(of: "#") {
            rest = rest[..<hash]
        }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard !authority.isEmpty else {
            throw CachingHTTPClientError(code: .invalidRequest, message: "no host in the URL: \(url)")
        }
        var path = String(rest[authorityEnd...])
        if path.isEmpty || path.first == "?" {
            path = "/" + path
        }
        let methodName = request.method == .MSEARCH ? "M-SEARCH" : request.method.rawValue
        guard let method = HTTPRequest.Method(methodName) else {
            throw CachingHTTPClientError(code: .invalidRequest, message: "not a valid method: \(methodName)")
        }
        self.init(
            method: method,
            scheme: scheme,
            authority: String(authority),
            path: path,
            headerFields: HTTPFields(endToEnd: request.headers)
        )
    }
}
#endif  // AsyncHTTPClient
