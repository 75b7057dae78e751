#if Redis
import NIOCore
import NIOPosix
import Stash

/// A TCP proxy on loopback in front of one server, which a test can cut and heal: one
/// instance's network partition from Redis while the others still reach it.
///
/// ``cut()`` closes every connection through the proxy and closes each new one at once, as a
/// partition ended by resets would; ``heal()`` lets connections through again.
///
/// Thread-safety: safe to use from any thread; the forwarding runs on NIO's event loops.
final class TCPProxy: Sendable {
    private struct State {
        var isCut = false
        var channels: [ObjectIdentifier: any Channel] = [:]
    }

    /// Forwards what one side reads to the other, and closes the other when it closes.
    private final class Forward: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let partner: any Channel
        init(to partner: any Channel) { self.partner = partner }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            partner.writeAndFlush(Self.unwrapInboundIn(data), promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            partner.close(promise: nil)
            context.fireChannelInactive()
        }
    }

    /// The port clients connect to.
    let port: Int
    private let server: any Channel
    private let state: LockedValue<State>

    /// Starts listening on 127.0.0.1 and a free port, forwarding to `targetPort` on 127.0.0.1.
    init(to targetPort: Int) throws {
        let state = LockedValue(State())
        self.state = state
        let group = MultiThreadedEventLoopGroup.singleton
        server = try ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { inbound in
                if state.withLock({ $0.isCut }) { return inbound.close() }
                return ClientBootstrap(group: inbound.eventLoop)
                    .connect(host: "127.0.0.1", port: targetPort)
                    .flatMap { outbound in
                        state.withLock { state in
                            state.channels[ObjectIdentifier(inbound)] = inbound
                            state.channels[ObjectIdentifier(outbound)] = outbound
                        }
                        let forget: @Sendable (any Channel) -> Void = { channel in
                            _ = state.withLock { $0.channels.removeValue(forKey: ObjectIdentifier(channel)) }
                        }
                        inbound.closeFuture.whenComplete { _ in forget(inbound) }
                        outbound.closeFuture.whenComplete { _ in forget(outbound) }
                        return outbound.pipeline.addHandler(Forward(to: inbound)).flatMap {
                            inbound.pipeline.addHandler(Forward(to: outbound))
                        }
                    }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
        port = server.localAddress!.port!
    }

    /// Closes every connection through the proxy, and every new one until ``heal()``.
    func cut() {
        let channels = state.withLock { state in
            state.isCut = true
            return Array(state.channels.values)
        }
        for channel in channels { channel.close(promise: nil) }
    }

    /// Lets new connections through again.
    func heal() {
        state.withLock { $0.isCut = false }
    }

    /// Stops listening and closes every connection.
    func stop() {
        cut()
        try? server.close().wait()
    }
}
#endif  // Redis
