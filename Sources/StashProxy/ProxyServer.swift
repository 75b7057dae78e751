#if AsyncHTTPClient
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import StashAsyncHTTPClient

/// Answers one request: the part that differs between a forwarding proxy and a caching one.
protocol ProxyResponder: Sendable {
    /// Writes the response to `request` through `writer`. Throwing closes the client connection
    /// (the way to signal a body cut short after the head went out).
    func respond(to request: HTTPRequest, body: ByteBuffer?, writer: ProxyResponseWriter) async throws
}

/// An HTTP/1.1 server on SwiftNIO that reads each request whole (head and body), gives it to a
/// ``ProxyResponder`` and writes the response; keep-alive, one request at a time per connection.
struct ProxyServer: Sendable {
    let host: String
    let port: Int
    /// Scheme and authority put on every request: the origin's, so the cache keys on the origin's URL.
    let originScheme: String
    let originAuthority: String
    let responder: any ProxyResponder
    /// Requests with a bigger body get a 413.
    let maximumRequestBodySize: Int
    let logger: Logger

    /// Binds the listening socket; `onBound` receives the bound port (useful with port 0).
    /// Runs until the task is cancelled.
    func run(onBound: @Sendable (Int) -> Void = { _ in }) async throws {
        // withThrowingDiscardingTaskGroup: macOS 14 and iOS 17 on (always there on Linux).
        guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) else {
            throw ChannelError.operationUnsupported
        }
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 16)
            .bind(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    return try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(
                        wrappingChannelSynchronously: channel
                    )
                }
            }
        onBound(server.channel.localAddress?.port ?? port)
        try await withThrowingDiscardingTaskGroup { group in
            try await server.executeThenClose { connections in
                for try await connection in connections {
                    group.addTask { await serve(connection) }
                }
            }
        }
    }

    /// Runs ``run(onBound:)`` in a new task and returns once the socket is bound, with the
    /// bound port and the task (cancel it to stop the server). For the package's tests, which run
    /// servers in process.
    package func start() async throws -> (port: Int, task: Task<Void, any Error>) {
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let task = Task {
            defer { continuation.finish() }
            try await run { continuation.yield($0) }
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            try await task.value
            throw CancellationError()
        }
        return (port, task)
    }

    private func serve(_ connection: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>) async {
        do {
            try await connection.executeThenClose { inbound, outbound in
                var parts = inbound.makeAsyncIterator()
                while let part = try await parts.next() {
                    guard case .head(let head) = part else { continue }
                    var body: ByteBuffer?
                    var tooLarge = false
                    reading: while let part = try await parts.next() {
                        switch part {
                        case .body(var chunk):
                            if (body?.readableBytes ?? 0) + chunk.readableBytes > maximumRequestBodySize {
                                tooLarge = true
                            } else if body == nil {
                                body = chunk
                            } else {
                                body!.writeBuffer(&chunk)
                            }
                        case .end:
                            break reading
                        case .head:
                            return
                        }
                    }
                    let writer = ProxyResponseWriter(outbound: outbound, keepAlive: head.isKeepAlive)
                    if tooLarge {
                        try await writer.writeError(.contentTooLarge, message: "request body over \(maximumRequestBodySize) bytes")
                    } else if let request = request(from: head) {
                        try await responder.respond(to: request, body: body, writer: writer)
                    } else {
                        try await writer.writeError(.badRequest, message: "invalid request method or target")
                    }
                    if !head.isKeepAlive { return }
                }
            }
        } catch {
            logger.debug("connection closed", metadata: ["error": "\(error)"])
        }
    }

    /// The HTTPTypes request for a NIO request head, aimed at the origin; nil for an invalid method.
    func request(from head: HTTPRequestHead) -> HTTPRequest? {
        // NIO spells M-SEARCH without its hyphen.
        let methodName = head.method == .MSEARCH ? "M-SEARCH" : head.method.rawValue
        guard let method = HTTPRequest.Method(methodName), head.uri.first == "/" || head.uri == "*" else {
            return nil
        }
        return HTTPRequest(
            method: method,
            scheme: originScheme,
            authority: originAuthority,
            path: head.uri,
            headerFields: HTTPFields(endToEnd: head.headers)
        )
    }
}
#endif  // AsyncHTTPClient
