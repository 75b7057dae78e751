#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Foundation
import HTTPTypes
import HTTPTypesFoundation
import StashHTTP

extension HTTPCachePolicy {
    /// The policy of a `URLRequest.CachePolicy`, as `URLSession` defines them:
    ///
    /// | `URLRequest.CachePolicy` | `HTTPCachePolicy` |
    /// |---|---|
    /// | `.useProtocolCachePolicy` | `.useProtocolPolicy` |
    /// | `.reloadIgnoringLocalCacheData`, `.reloadIgnoringLocalAndRemoteCacheData` | `.reload` |
    /// | `.reloadRevalidatingCacheData` | `.revalidate` |
    /// | `.returnCacheDataElseLoad` | `.returnStoredElseLoad` |
    /// | `.returnCacheDataDontLoad` | `.returnStoredDontLoad` |
    ///
    /// `.reloadIgnoringLocalAndRemoteCacheData` also asks caches on the way not to answer
    /// (``URLRequest/withoutIntermediaryCaches``).
    init(_ policy: URLRequest.CachePolicy) {
        switch policy {
        case .useProtocolCachePolicy: self = .useProtocolPolicy
        case .reloadIgnoringLocalCacheData, .reloadIgnoringLocalAndRemoteCacheData: self = .reload
        case .reloadRevalidatingCacheData: self = .revalidate
        case .returnCacheDataElseLoad: self = .returnStoredElseLoad
        case .returnCacheDataDontLoad: self = .returnStoredDontLoad
        @unknown default: self = .useProtocolPolicy
        }
    }
}

extension URLRequest {
    /// The request as the cache sees it: the method, the URL and the fields, with the session's
    /// `httpAdditionalHeaders` that the request does not set itself (URLSession sends them, so a
    /// `Vary` on one of them must see them). `nil` when the URL is not `http` or `https`.
    func cacheRequest(additionalHeaders: [AnyHashable: Any]?) -> HTTPRequest? {
        guard let scheme = url?.scheme?.lowercased(), scheme == "http" || scheme == "https",
              var request = httpRequest
        else { return nil }
        for case let (name as String, value as String) in additionalHeaders ?? [:] {
            guard let name = HTTPField.Name(name), request.headerFields[name] == nil else { continue }
            request.headerFields.append(HTTPField(name: name, value: value))
        }
        if cachePolicy == .reloadIgnoringLocalAndRemoteCacheData, request.headerFields[.cacheControl] == nil {
            request.headerFields[.cacheControl] = "no-cache"
        }
        return request
    }

    /// This request, sent as the cache asks: `request`'s method, URL and fields (which may add
    /// `If-None-Match` or `If-Modified-Since`), with everything else of this request kept (timeout,
    /// cookie handling, network access settings), and no `URLCache` consulted.
    func sending(_ request: HTTPRequest) -> URLRequest? {
        guard let converted = URLRequest(httpRequest: request) else { return nil }
        var sent = self
        sent.url = converted.url
        sent.httpMethod = converted.httpMethod
        sent.allHTTPHeaderFields = converted.allHTTPHeaderFields
        sent.cachePolicy = .reloadIgnoringLocalCacheData
        return sent
    }
}

extension HTTPURLResponse {
    /// `response` as Foundation gives responses, for `url`: the cache's `Age` and
    /// `Cache-Status` are among its fields.
    static func converting(_ response: HTTPResponse, url: URL) throws -> HTTPURLResponse {
        guard let converted = HTTPURLResponse(httpResponse: response, url: url) else {
            throw URLError(.cannotParseResponse, userInfo: [NSURLErrorFailingURLErrorKey: url])
        }
        return converted
    }
}
