#if AsyncHTTPClient
import AsyncHTTPClient
import HTTPTypes
import NIOCore
import StashAsyncHTTPClient

/// Sends every request to the origin and streams the answer back, storing nothing
/// (`stash-proxy --no-cache`: the baseline the caching proxy is measured against).
struct ForwardingResponder: ProxyResponder {
    let fetcher: OriginFetcher

    func respond(to request: HTTPRequest, body: ByteBuffer?, writer: ProxyResponseWriter) async throws {
        let head: HTTPResponse
        let responseBody: HTTPClientResponse.Body
        do {
            (head, responseBody) = try await fetcher.fetch(request, body: body.map { .bytes($0) })
        } catch {
            try await writer.writeError(error.code == .originTimedOut ? .gatewayTimeout : .badGateway, message: error.message)
            return
        }
        try await writer.writeHead(head)
        for try await chunk in responseBody {
            try await writer.writeBody(chunk)
        }
        try await writer.end()
    }
}
#endif  // AsyncHTTPClient
