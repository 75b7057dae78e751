#if AsyncHTTPClient
import AsyncHTTPClient
import HTTPTypes
import NIOCore
import StashAsyncHTTPClient
import StashHTTP

/// Answers each request through the cache (stash-proxy's normal mode): from the store when RFC 9111
/// allows, from the origin otherwise, and streams the answer back.
struct CachingResponder: ProxyResponder {
    let client: CachingHTTPClient
    let timeout: TimeAmount

    func respond(to request: HTTPRequest, body: ByteBuffer?, writer: ProxyResponseWriter) async throws {
        let answer: HTTPCacheResponse
        do {
            answer = try await client.response(for: request, body: body.map { .bytes($0) }, policy: .useProtocolPolicy, timeout: timeout)
        } catch {
            try await writer.writeError(error.code == .originTimedOut ? .gatewayTimeout : .badGateway, message: error.message)
            return
        }
        if let bytes = answer.body.bufferedBytes {
            try await writer.write(answer.response, body: ByteBuffer(bytes: bytes))
            return
        }
        try await writer.writeHead(answer.response)
        for try await chunk in answer.body {
            try await writer.writeBody(ByteBuffer(bytes: chunk))
        }
        try await writer.end()
    }
}
#endif  // AsyncHTTPClient
