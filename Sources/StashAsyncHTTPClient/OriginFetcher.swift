#if AsyncHTTPClient
import AsyncHTTPClient
import Logging
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1

/// Sends one `HTTPRequest` to its origin through AsyncHTTPClient and returns the response head
/// with its body still streaming. Hop-by-hop fields are removed both ways.
///
/// The URL is the request's scheme, authority and path (path includes the query).
/// Thread-safe: a value holding a thread-safe `HTTPClient`.
package struct OriginFetcher: Sendable {
    /// The client that reaches the origin.
    package let client: HTTPClient
    /// How long the origin has to send the response head (AsyncHTTPClient's deadline). The body is
    /// bounded by the client's read timeout instead, between two reads.
    package let timeout: TimeAmount
    /// The logger AsyncHTTPClient logs the request to; `nil` for its own (which logs nothing).
    package let logger: Logger?

    /// Creates a fetcher.
    ///
    /// - Parameters:
    ///   - client: The client that reaches the origin. Should not follow redirects: a cache stores
    ///     what the origin said for the URL asked for.
    ///   - timeout: How long the origin has to send its response head.
    ///   - logger: Passed to AsyncHTTPClient's `execute`. Default `nil`.
    package init(client: HTTPClient, timeout: TimeAmount, logger: Logger? = nil) {
        self.client = client
        self.timeout = timeout
        self.logger = logger
    }

    /// Sends `request` with `body` to the origin.
    ///
    /// - Returns: The origin's response head (end-to-end fields only) and its body, not yet read.
    /// - Throws: ``CachingHTTPClientError`` with code `.invalidRequest`, `.originUnreachable` or
    ///   `.originTimedOut`. Errors while the body streams are AsyncHTTPClient's own; use
    ///   ``CachingHTTPClientError/init(originFailure:url:)`` to classify them.
    package func fetch(
        _ request: HTTPRequest,
        body: HTTPClientRequest.Body?
    ) async throws(CachingHTTPClientError) -> (HTTPResponse, HTTPClientResponse.Body) {
        let url = "\(request.scheme ?? "http")://\(request.authority ?? "")\(request.path ?? "/")"
        var outgoing = HTTPClientRequest(url: url)
        outgoing.method = HTTPMethod(request.method)
        var fields = request.headerFields
        fields.removeHopByHop()
        // AsyncHTTPClient frames the body it is given; a stale length would contradict it.
        fields[.contentLength] = nil
        outgoing.headers = HTTPHeaders(fields)
        outgoing.body = body
        let response: HTTPClientResponse
        do {
            response = try await client.execute(outgoing, timeout: timeout, logger: logger)
        } catch where Self.isStaleConnection(error) && request.method.isIdempotent {
            // A pooled keep-alive connection the origin closed just as the request went out
            // (node closes idle ones after 5 s): nothing reached the origin's application, so an
            // idempotent request is sent once more, on a new connection, as nginx does.
            do {
                response = try await client.execute(outgoing, timeout: timeout, logger: logger)
            } catch {
                throw CachingHTTPClientError(originFailure: error, url: url)
            }
        } catch {
            throw CachingHTTPClientError(originFailure: error, url: url)
        }
        var head = HTTPResponse(
            status: HTTPResponse.Status(code: Int(response.status.code), reasonPhrase: response.status.reasonPhrase),
            headerFields: HTTPFields(endToEnd: response.headers)
        )
        // 1xx codes above 199 are impossible here, but a code over 999 would trap in HTTPTypes.
        if response.status.code > 999 {
            head.status = .badGateway
        }
        return (head, response.body)
    }
}

extension OriginFetcher {
    /// Whether `error` is a connection closed or reset under a request before any response:
    /// what a reused keep-alive connection the origin has just closed looks like.
    static func isStaleConnection(_ error: any Error) -> Bool {
        if let error = error as? HTTPClientError {
            return error == .remoteConnectionClosed
        }
        if let error = error as? IOError {
            return error.errnoCode == ECONNRESET || error.errnoCode == EPIPE
        }
        #if canImport(Network)
        // Apple platforms: HTTPClient's default event loops are Network.framework's.
        if let error = error as? HTTPClient.NWPOSIXError {
            return error.errorCode == .ECONNRESET || error.errorCode == .EPIPE
        }
        #endif
        return false
    }
}

extension HTTPRequest.Method {
    /// GET, HEAD, OPTIONS, TRACE, PUT and DELETE (RFC 9110 §9.2.2): safe to send twice.
    var isIdempotent: Bool {
        switch self {
        case .get, .head, .options, .trace, .put, .delete: true
        default: false
        }
    }
}

extension HTTPMethod {
    /// NIO's method for an HTTPTypes method. `M-SEARCH` becomes a raw method: NIO spells its
    /// `.MSEARCH` case without the hyphen on the wire.
    package init(_ method: HTTPRequest.Method) {
        if method.rawValue == "M-SEARCH" {
            self = .RAW(value: "M-SEARCH")
        } else {
            self.init(rawValue: method.rawValue)
        }
    }
}

extension CachingHTTPClientError {
    /// Classifies an error thrown by AsyncHTTPClient while it reached `url`: a timeout or deadline
    /// becomes `.originTimedOut`, anything else `.originUnreachable`.
    package init(originFailure error: any Error, url: String) {
        if let error = error as? CachingHTTPClientError {
            self = error
            return
        }
        let timedOut: Bool
        if let error = error as? HTTPClientError {
            timedOut = error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout
                || error == .getConnectionFromPoolTimeout || error == .writeTimeout
        } else {
            timedOut = false
        }
        self.init(
            code: timedOut ? .originTimedOut : .originUnreachable,
            message: timedOut ? "the origin did not answer in time: \(url)" : "the origin failed: \(url)",
            cause: error
        )
    }
}
#endif  // AsyncHTTPClient
