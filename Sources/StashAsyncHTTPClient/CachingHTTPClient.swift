#if AsyncHTTPClient
import AsyncHTTPClient
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1
import StashHTTP

/// An AsyncHTTPClient `HTTPClient` whose requests go through an RFC 9111 ``HTTPCache``.
///
/// ```swift
/// let cache = try HTTPCache(configuration: .init(mode: .private))
/// let client = CachingHTTPClient(client: HTTPClient.shared, cache: cache)
/// // AsyncHTTPClient's own shape: an HTTPClientResponse, with a Cache-Status field (RFC 9211).
/// let response = try await client.execute(HTTPClientRequest(url: "https://example.com/"), timeout: .seconds(30))
/// print(response.headers["Cache-Status"])  // ["Stash; hit"]
/// // With a policy, the outcome as a value too:
/// let cached = try await client.execute(HTTPClientRequest(url: "https://example.com/"),
///                                       policy: .returnStoredElseLoad, timeout: .seconds(30))
/// print(cached.outcome)  // hit, miss, revalidated, stale or bypass
/// ```
///
/// `execute(_:timeout:logger:)` and `execute(_:deadline:logger:)` have the signatures of
/// `HTTPClient`'s, so code written against AsyncHTTPClient takes a `CachingHTTPClient` by changing
/// the receiver.
///
/// A request is answered from the cache when RFC 9111 allows (a fresh stored response, or a stale
/// one the rules or the policy allow); otherwise it goes to the origin through `client`, with
/// `If-None-Match`/`If-Modified-Since` when a stored response can be revalidated, and the answer is
/// stored when it may be. The cache's mode (private or shared) is the cache's: a client normally
/// uses a private cache, the default of ``HTTPCache/Configuration``.
///
/// - Important: Give it an `HTTPClient` that does not follow redirects
///   (`redirectConfiguration: .disallow`): a cache stores what the origin answered for the URL
///   asked, and a redirect followed inside the client would be stored under the first URL.
///
/// - Important: Give it an `HTTPClient` with a read timeout (`HTTPClient.Configuration.Timeout`'s
///   `read`). As with AsyncHTTPClient itself, the `timeout` of ``execute(_:timeout:logger:)`` ends
///   when the response head arrives; a body that stops arriving is ended by the client's read
///   timeout, kept on its event loop between two reads from the socket. Then the request fails
///   with `.originTimedOut` and the store stays as it was. Without a read timeout, a body that
///   stalls holds its request, and the concurrent requests for that URL that wait for it, until
///   the origin closes the connection. (AsyncHTTPClient does not expose a client's configuration,
///   so this cannot be checked here.)
///
/// Thread-safe: share one instance; calls run concurrently, and concurrent misses of one URL share
/// one origin request. Never blocks a thread: it suspends while the cache or the origin works.
public final class CachingHTTPClient: Sendable {
    /// The client that reaches origins.
    public let client: HTTPClient
    /// The cache the responses are stored in.
    public let cache: HTTPCache
    /// Wraps `client` so its requests go through `cache`.
    ///
    /// - Parameters:
    ///   - client: The client that reaches the origins. It is not shut down by this object.
    ///   - cache: The cache. Several clients may share one. Its
    ///     ``HTTPCache/Configuration/cacheName`` names it in `Cache-Status`.
    /// - Complexity: O(1).
    public init(client: HTTPClient, cache: HTTPCache) {
        self.client = client
        self.cache = cache
    }

    /// Executes `request` through the cache, as `HTTPClient.execute(_:timeout:logger:)` does
    /// without one: the same parameters, the same response type.
    ///
    /// - Parameters:
    ///   - request: The request; its URL must be absolute (`http` or `https`).
    ///   - timeout: How long the origin has to send its response head; not used on a fresh hit.
    ///   - logger: Passed to AsyncHTTPClient for the origin request. Default `nil`.
    /// - Returns: The response, with `Age` and a `Cache-Status` field (RFC 9211) that says how
    ///   it was produced. Its body streams: read it once.
    /// - Throws: ``CachingHTTPClientError``, as ``execute(_:policy:timeout:logger:)`` does.
    public func execute(
        _ request: HTTPClientRequest, timeout: TimeAmount, logger: Logger? = nil
    ) async throws(CachingHTTPClientError) -> HTTPClientResponse {
        try await execute(request, policy: .useProtocolPolicy, timeout: timeout, logger: logger).response
    }

    /// Executes `request` through the cache, as `HTTPClient.execute(_:deadline:logger:)` does
    /// without one.
    ///
    /// - Parameters:
    ///   - request: The request; its URL must be absolute (`http` or `https`).
    ///   - deadline: When the origin's response head must have arrived; not used on a fresh hit.
    ///   - logger: Passed to AsyncHTTPClient for the origin request. Default `nil`.
    /// - Returns: As ``execute(_:timeout:logger:)``.
    /// - Throws: ``CachingHTTPClientError``, as ``execute(_:policy:timeout:logger:)`` does.
    public func execute(
        _ request: HTTPClientRequest, deadline: NIODeadline, logger: Logger? = nil
    ) async throws(CachingHTTPClientError) -> HTTPClientResponse {
        try await execute(request, policy: .useProtocolPolicy, timeout: deadline - .now(), logger: logger).response
    }

    /// Executes `request` through the cache with a policy, and says how the response was produced.
    ///
    /// - Parameters:
    ///   - request: The request; its URL must be absolute (`http` or `https`).
    ///   - policy: How the cache may answer, such as ``HTTPCachePolicy/useProtocolPolicy`` (RFC 9111).
    ///   - timeout: How long the origin has to send its response head, as AsyncHTTPClient's own
    ///     `execute(_:timeout:logger:)`; the body is bounded by the client's read timeout. Not used on a
    ///     fresh hit.
    ///   - logger: Passed to AsyncHTTPClient for the origin request. Default `nil`.
    /// - Returns: The response, with `Age` and a `Cache-Status` field, and how it was produced.
    ///   Its body streams: read it once.
    /// - Throws: ``CachingHTTPClientError`` when the URL is invalid (`.invalidRequest`), or the
    ///   origin is needed and cannot be reached or times out (`.originUnreachable`,
    ///   `.originTimedOut`) and no stale response may be served instead. An `only-if-cached` or
    ///   ``HTTPCachePolicy/returnStoredDontLoad`` miss is a `504` response, not an error.
    public func execute(
        _ request: HTTPClientRequest,
        policy: HTTPCachePolicy,
        timeout: TimeAmount,
        logger: Logger? = nil
    ) async throws(CachingHTTPClientError) -> CachedHTTPResponse {
        let head = try HTTPRequest(request)
        let answer = try await response(for: head, body: request.body, policy: policy, timeout: timeout, logger: logger)
        let headers = HTTPHeaders(answer.response.headerFields)
        let body: HTTPClientResponse.Body
        if let bytes = answer.body.bufferedBytes {
            body = .bytes(ByteBuffer(bytes: bytes))
        } else {
            body = .stream(answer.body.map { ByteBuffer(bytes: $0) })
        }
        return CachedHTTPResponse(
            status: HTTPResponseStatus(statusCode: answer.response.status.code, reasonPhrase: answer.response.status.reasonPhrase),
            headers: headers,
            body: body,
            outcome: answer.outcome
        )
    }

    /// The cache's answer to `request` in HTTPTypes terms, the origin reached through `client`:
    /// what ``execute(_:policy:timeout:logger:)`` and stash-proxy share.
    package func response(
        for request: HTTPRequest,
        body: HTTPClientRequest.Body?,
        policy: HTTPCachePolicy,
        timeout: TimeAmount,
        logger: Logger? = nil
    ) async throws(CachingHTTPClientError) -> HTTPCacheResponse {
        let fetcher = OriginFetcher(client: client, timeout: timeout, logger: logger)
        do {
            return try await cache.responseWithCacheStatus(for: request, policy: policy) { request, _ in
                let (head, responseBody) = try await fetcher.fetch(request, body: body)
                return (head, HTTPCacheBody(responseBody.map { ArraySlice($0.readableBytesView) }))
            }
        } catch {
            throw CachingHTTPClientError(originFailure: error, url: request.url)
        }
    }
}

extension HTTPRequest {
    /// The URL this request is aimed at, for messages.
    var url: String { "\(scheme ?? "http")://\(authority ?? "")\(path ?? "/")" }
}
#endif  // AsyncHTTPClient
