#if AsyncHTTPClient
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// The bench's origin: a SwiftNIO HTTP/1.1 server on 127.0.0.1 and a free port, serving
/// bodies of fixed sizes from memory.
///
/// - `/fresh/SIZE`: `Cache-Control: max-age=3600`, an `ETag`: fresh hits once stored.
/// - `/validate/SIZE`: `Cache-Control: max-age=0`, an `ETag`; a request whose `If-None-Match`
///   names that tag gets a `304` without a body, any other a `200` with the body.
///
/// SIZE is a byte count. No answer carries `Date` (the cache takes the time it received the
/// response instead): a fixed one would make every response years old, and formatting the current
/// one per response would time this origin, not the cache.
final class BenchOrigin: Sendable {
    let port: Int
    private let channel: any Channel
    private let accepted = NIOLockedValueBox(0)

    /// The connections accepted so far: a client that reuses its connections opens few.
    var connectionsAccepted: Int { accepted.withLockedValue { $0 } }

    init(sizes: [Int]) async throws {
        var bodies: [Int: ByteBuffer] = [:]
        for size in sizes { bodies[size] = ByteBuffer(repeating: 0x61, count: size) }
        let served = bodies
        let accepted = self.accepted
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                accepted.withLockedValue { $0 += 1 }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(bodies: served))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        port = channel.localAddress!.port!
    }

    func stop() async throws {
        try await channel.close()
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        static let eTag = "\"v1\""
        let bodies: [Int: ByteBuffer]
        var head: HTTPRequestHead?

        init(bodies: [Int: ByteBuffer]) {
            self.bodies = bodies
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
            case .body:
                break
            case .end:
                guard let head else { return }
                answer(head, context: context)
            }
        }

        private func answer(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
            let parts = head.uri.split(separator: "/")
            guard parts.count == 2, let size = Int(parts[1]), let body = bodies[size] else {
                let headers = HTTPHeaders([("Content-Length", "0")])
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .notFound, headers: headers))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                return
            }
            let validate = parts[0] == "validate"
            var headers = HTTPHeaders()
            headers.add(name: "Cache-Control", value: validate ? "max-age=0" : "max-age=3600")
            headers.add(name: "ETag", value: Self.eTag)
            if validate && head.headers["If-None-Match"].contains(Self.eTag) {
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .notModified, headers: headers))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                return
            }
            headers.add(name: "Content-Type", value: "application/octet-stream")
            headers.add(name: "Content-Length", value: String(size))
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}
#endif  // AsyncHTTPClient
