#if AsyncHTTPClient
import AsyncHTTPClient
import NIOHTTP1
import StashHTTP

/// A response from ``CachingHTTPClient``: AsyncHTTPClient's response parts and how the cache produced it.
///
/// The headers are the stored or forwarded ones plus `Age` (when the response was stored) and an
/// RFC 9211 `Cache-Status` field rendering ``outcome``. A value type; thread-safe to pass around,
/// but its body streams and is read once.
public struct CachedHTTPResponse: Sendable {
    /// The status and reason phrase, as the origin sent them.
    public var status: HTTPResponseStatus
    /// Every header line in order, plus `Age` and `Cache-Status`.
    public var headers: HTTPHeaders
    /// The body, read once.
    public var body: HTTPClientResponse.Body
    /// Whether the response was a fresh hit, a miss, revalidated with the origin, stale, or bypassed the cache.
    public var outcome: HTTPCacheOutcome

    /// Creates a response.
    ///
    /// - Parameters:
    ///   - status: The status.
    ///   - headers: The header lines.
    ///   - body: The body.
    ///   - outcome: How the cache produced it.
    public init(status: HTTPResponseStatus, headers: HTTPHeaders, body: HTTPClientResponse.Body, outcome: HTTPCacheOutcome) {
        self.status = status
        self.headers = headers
        self.body = body
        self.outcome = outcome
    }

    /// The same response as AsyncHTTPClient's own type, for code that expects one.
    public var response: HTTPClientResponse {
        HTTPClientResponse(version: .http1_1, status: status, headers: headers, body: body)
    }
}
#endif  // AsyncHTTPClient
