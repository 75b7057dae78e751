#if AsyncHTTPClient
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1
import Stash
import StashAsyncHTTPClient
import StashHTTP

/// Writes one response to the client connection: the head, the body chunk by chunk, the end.
///
/// Status, reason phrase and every field line go out as given (no `Date` or `Server` is added);
/// NIO adds `Transfer-Encoding: chunked` only when the head has no `Content-Length`.
struct ProxyResponseWriter {
    let outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>
    /// False when the request asked to close the connection after this response.
    let keepAlive: Bool

    private func nioHead(_ response: HTTPResponse) -> HTTPResponseHead {
        var headers = HTTPHeaders(response.headerFields)
        if !keepAlive {
            headers.replaceOrAdd(name: "Connection", value: "close")
        }
        return HTTPResponseHead(
            version: .http1_1,
            status: HTTPResponseStatus(statusCode: response.status.code, reasonPhrase: response.status.reasonPhrase),
            headers: headers
        )
    }

    /// Writes the head alone, before a streamed body.
    func writeHead(_ response: HTTPResponse) async throws {
        try await outbound.write(.head(nioHead(response)))
    }

    /// Writes one body chunk.
    func writeBody(_ chunk: ByteBuffer) async throws {
        try await outbound.write(.body(.byteBuffer(chunk)))
    }

    /// Ends the response.
    func end() async throws {
        try await outbound.write(.end(nil))
    }

    /// Writes a whole response in one go: one hop to the event loop instead of three.
    func write(_ response: HTTPResponse, body: ByteBuffer?) async throws {
        if let body, body.readableBytes > 0 {
            try await outbound.write(contentsOf: [.head(nioHead(response)), .body(.byteBuffer(body)), .end(nil)])
        } else {
            try await outbound.write(contentsOf: [.head(nioHead(response)), .end(nil)])
        }
    }

    /// Writes a short plain-text response the proxy makes itself (400, 502, 504).
    func writeError(_ status: HTTPResponse.Status, message: String) async throws {
        let body = ByteBuffer(string: message + "\n")
        var fields = HTTPFields()
        fields[.contentType] = "text/plain; charset=utf-8"
        fields[.contentLength] = String(body.readableBytes)
        fields[.date] = HTTPDate.format(WallClock().nanosecondsNow / 1_000_000_000)
        try await write(HTTPResponse(status: status, headerFields: fields), body: body)
    }
}
#endif  // AsyncHTTPClient
