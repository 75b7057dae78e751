#if AsyncHTTPClient
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Foundation
import HTTPTypes
import HTTPTypesFoundation
import NIOCore
import StashAsyncHTTPClient
import StashHTTP
import StashURLSession

/// Answers each request through Foundation's URLSession instead of AsyncHTTPClient
/// (`stash-proxy --client urlsession` or `--client urlsession-urlcache`): the harness that scores
/// ``CachingURLSession`` and plain `URLSession` with its `URLCache` on the cache-tests suite, beside
/// the AsyncHTTPClient adapter. Redirects are not followed, as a proxy passes them on.
struct URLSessionResponder: ProxyResponder {
    /// Which URLSession answers.
    enum Client: Sendable {
        /// `CachingURLSession` over an `HTTPCache`.
        case caching(CachingURLSession)
        /// A plain `URLSession` whose configuration has a `URLCache` and `.useProtocolCachePolicy`.
        case plain(URLSession)
    }

    let client: Client
    /// Seconds a request may take, as `URLRequest.timeoutInterval`.
    let timeout: TimeInterval

    /// `CachingURLSession` over `cache`, not following redirects.
    ///
    /// - Parameter timeout: Seconds a request may take, as `URLRequest.timeoutInterval`.
    static func caching(_ cache: HTTPCache, timeout: Int64) -> URLSessionResponder {
        URLSessionResponder(client: .caching(CachingURLSession(cache: cache, followsRedirects: false)), timeout: TimeInterval(timeout))
    }

    /// A plain `URLSession` with a 512 MiB in-memory `URLCache` and `.useProtocolCachePolicy`, not
    /// following redirects: what a new user of Foundation's cache gets.
    ///
    /// - Parameter timeout: Seconds a request may take, as `URLRequest.timeoutInterval`.
    static func plain(timeout: Int64) -> URLSessionResponder {
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = URLCache(memoryCapacity: 512 << 20, diskCapacity: 0, diskPath: nil)
        configuration.requestCachePolicy = .useProtocolCachePolicy
        let session = URLSession(configuration: configuration, delegate: NotFollowingRedirects(), delegateQueue: nil)
        return URLSessionResponder(client: .plain(session), timeout: TimeInterval(timeout))
    }

    func respond(to request: HTTPRequest, body: ByteBuffer?, writer: ProxyResponseWriter) async throws {
        guard var urlRequest = URLRequest(httpRequest: request) else {
            try await writer.writeError(.badRequest, message: "the request has no valid URL")
            return
        }
        urlRequest.timeoutInterval = timeout
        let bodyData = body.map { Data($0.readableBytesView) }
        let data: Data
        let response: URLResponse
        do {
            switch (client, bodyData) {
            case (.caching(let session), nil): (data, response) = try await session.data(for: urlRequest)
            case (.caching(let session), let bytes?): (data, response) = try await session.upload(for: urlRequest, from: bytes)
            case (.plain(let session), nil): (data, response) = try await session.data(for: urlRequest)
            case (.plain(let session), let bytes?): (data, response) = try await session.upload(for: urlRequest, from: bytes)
            }
        } catch {
            let timedOut = (error as? URLError)?.code == .timedOut
            try await writer.writeError(timedOut ? .gatewayTimeout : .badGateway, message: "\(error)")
            return
        }
        guard var head = (response as? HTTPURLResponse)?.httpResponse else {
            try await writer.writeError(.badGateway, message: "the origin's response could not be read")
            return
        }
        head.headerFields.removeHopByHop()
        // URLSession may have decoded the body: its length is what is sent.
        if request.method != .head, ![204, 304].contains(head.status.code) {
            head.headerFields[.contentLength] = String(data.count)
        }
        try await writer.write(head, body: ByteBuffer(bytes: data))
    }
}

/// A session delegate that hands every redirect back instead of following it.
final class NotFollowingRedirects: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
#endif  // AsyncHTTPClient
