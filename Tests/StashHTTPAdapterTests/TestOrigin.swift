#if AsyncHTTPClient
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A real HTTP/1.1 origin on 127.0.0.1 and a free port, for the adapter tests: each request is
/// answered by the test's `respond` closure, and every request received is recorded.
final class TestOrigin: Sendable {
    /// What the origin does with one request.
    enum Reply: Sendable {
        /// A normal response; `Content-Length` is added when `headers` has none.
        case response(status: HTTPResponseStatus = .ok, headers: [(String, String)] = [], body: String = "")
        /// Sends the head announcing `announced` bytes, then `sent` bytes of them, then closes.
        case closeMidBody(announced: Int, sent: String)
        /// Sends a 200 head with `headers` announcing `announced` bytes, then `sent` bytes of them,
        /// then nothing more (until the server stops).
        case stallMidBody(headers: [(String, String)], announced: Int, sent: String)
        /// Closes the connection without answering.
        case close
        /// Never answers (until the server stops).
        case hang
    }

    /// One request as the origin saw it.
    struct Received: Sendable {
        let method: String
        let uri: String
        let headers: HTTPHeaders
        let body: String
    }

    let port: Int
    private let channel: any Channel
    private let state: NIOLockedValueBox<[Received]>
    private let connections: NIOLockedValueBox<[any Channel]>

    var url: String { "http://127.0.0.1:\(port)" }

    /// How many connections clients have opened so far.
    var connectionCount: Int { connections.withLockedValue { $0.count } }

    /// The requests received so far, oldest first.
    var received: [Received] { state.withLockedValue { $0 } }

    /// Starts the origin; stop it with ``stop()``.
    init(respond: @escaping @Sendable (Received) -> Reply) async throws {
        let state = NIOLockedValueBox<[Received]>([])
        let connections = NIOLockedValueBox<[any Channel]>([])
        self.state = state
        self.connections = connections
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                connections.withLockedValue { $0.append(channel) }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(state: state, respond: respond))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        port = channel.localAddress!.port!
    }

    /// Stops listening and closes every connection, so the origin is really gone (a client's
    /// pooled keep-alive connection would otherwise still reach it).
    func stop() async throws {
        try await channel.close()
        for connection in connections.withLockedValue({ $0 }) {
            try? await connection.close()
        }
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        let state: NIOLockedValueBox<[Received]>
        let respond: @Sendable (Received) -> Reply
        var head: HTTPRequestHead?
        var body = ""

        init(state: NIOLockedValueBox<[Received]>, respond: @escaping @Sendable (Received) -> Reply) {
            self.state = state
            self.respond = respond
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                body = ""
            case .body(let chunk):
                body += String(buffer: chunk)
            case .end:
                guard let head else { return }
                let received = Received(method: head.method.rawValue, uri: head.uri, headers: head.headers, body: body)
                state.withLockedValue { $0.append(received) }
                answer(respond(received), context: context)
            }
        }

        private func answer(_ reply: Reply, context: ChannelHandlerContext) {
            switch reply {
            case .response(let status, let fields, let text):
                var headers = HTTPHeaders(fields)
                if !headers.contains(name: "content-length") {
                    headers.add(name: "Content-Length", value: String(text.utf8.count))
                }
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
                if !text.isEmpty {
                    context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: text)))), promise: nil)
                }
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            case .closeMidBody(let announced, let sent):
                let headers = HTTPHeaders([("Content-Length", String(announced)), ("Cache-Control", "max-age=3600")])
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: sent)))), promise: nil)
                context.close(promise: nil)
            case .stallMidBody(let fields, let announced, let sent):
                var headers = HTTPHeaders(fields)
                headers.replaceOrAdd(name: "Content-Length", value: String(announced))
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: sent)))), promise: nil)
            case .close:
                context.close(promise: nil)
            case .hang:
                break
            }
        }
    }
}
#endif  // AsyncHTTPClient
