#if Redis
import NIOCore
import NIOPosix
import Testing
@testable import StashRedis

extension RedisSuites {
    /// A fake server on loopback that answers every command with fixed bytes, to
    /// check that a truncated or malformed reply from the network gives a clear error.
    @Suite(.timeLimit(.minutes(5))) struct RedisBadPeerTests {
        private final class FixedReply: ChannelInboundHandler, Sendable {
            typealias InboundIn = ByteBuffer
            let reply: [UInt8]
            let closeAfter: Bool
            init(reply: [UInt8], closeAfter: Bool) {
                self.reply = reply
                self.closeAfter = closeAfter
            }
            func channelRead(context: ChannelHandlerContext, data: NIOAny) {
                let write = context.writeAndFlush(NIOAny(ByteBuffer(bytes: reply)))
                if closeAfter {
                    let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
                    write.whenComplete { _ in loopBound.value.close(promise: nil) }
                }
            }
        }

        /// Answers the first bytes it reads with fixed bytes, then closes, whatever else arrives.
        private final class AnswersOnceThenCloses: ChannelInboundHandler {
            typealias InboundIn = ByteBuffer
            let reply: [UInt8]
            var answered = false
            init(reply: [UInt8]) {
                self.reply = reply
            }
            func channelRead(context: ChannelHandlerContext, data: NIOAny) {
                if answered { return }
                answered = true
                let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
                context.writeAndFlush(NIOAny(ByteBuffer(bytes: reply))).whenComplete { _ in loopBound.value.close(promise: nil) }
            }
        }

        /// Answers the n-th read with the n-th reply, then the last one again: a server
        /// whose commands arrive one at a time.
        private final class ScriptedReplies: ChannelInboundHandler {
            typealias InboundIn = ByteBuffer
            let replies: [String]
            private var next = 0
            init(_ replies: [String]) {
                self.replies = replies
            }
            func channelRead(context: ChannelHandlerContext, data: NIOAny) {
                let reply = replies[min(next, replies.count - 1)]
                next += 1
                context.writeAndFlush(NIOAny(ByteBuffer(string: reply)), promise: nil)
            }
        }

        private func withFakeServer(reply: String, closeAfter: Bool, once: Bool = false,
                                    _ body: (Int) async throws -> Void) async throws {
            let bytes = Array(reply.utf8)
            try await withFakeServer(makeHandler: {
                once ? AnswersOnceThenCloses(reply: bytes) as any ChannelInboundHandler : FixedReply(reply: bytes, closeAfter: closeAfter)
            }, body)
        }

        private func withFakeServer(
            makeHandler: @escaping @Sendable () -> any ChannelInboundHandler, _ body: (Int) async throws -> Void
        ) async throws {
            let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(makeHandler())
                    }
                }
                .bind(host: "127.0.0.1", port: 0).get()
            do {
                try await body(channel.localAddress!.port!)
            } catch {
                try? await channel.close()
                throw error
            }
            try await channel.close()
        }

        private func client(port: Int) -> RedisClient {
            var configuration = RedisConfiguration(host: "127.0.0.1", port: port)
            configuration.commandTimeout = .seconds(5)
            return RedisClient(configuration: configuration)
        }

        @Test func aMalformedReplyIsAProtocolViolation() async throws {
            try await withFakeServer(reply: "$3\r\nabcdef\r\n", closeAfter: false) { port in
                let client = client(port: port)
                do {
                    _ = try await client.get("k")
                    Issue.record("the reply is malformed")
                } catch {
                    #expect((error as? RedisError)?.code == .protocolViolation)
                    #expect("\(error)".contains("CRLF"), "\(error)")
                }
                await client.close()
            }
        }

        @Test func aTruncatedReplyFailsWhenTheConnectionCloses() async throws {
            try await withFakeServer(reply: "$100\r\nabc", closeAfter: true) { port in
                let client = client(port: port)
                do {
                    _ = try await client.get("k")
                    Issue.record("the reply is truncated")
                } catch {
                    let code = (error as? RedisError)?.code
                    #expect(code == .protocolViolation || code == .connectionClosed, "\(error)")
                }
                await client.close()
            }
        }

        @Test func aHugeAnnouncedLengthFailsWithoutAllocating() async throws {
            try await withFakeServer(reply: "$4000000000\r\n", closeAfter: false) { port in
                var configuration = RedisConfiguration(host: "127.0.0.1", port: port)
                configuration.maximumReplyBulkLength = 1024 * 1024
                let client = RedisClient(configuration: configuration)
                do {
                    _ = try await client.get("k")
                    Issue.record("the reply is over the limit")
                } catch {
                    #expect((error as? RedisError)?.code == .replyTooLarge)
                }
                await client.close()
            }
        }

        /// The connection dies mid-pipeline: the commands answered keep their replies,
        /// in order, and every other command fails with a clear error.
        @Test func aConnectionLostMidPipelineFailsOnlyTheUnansweredCommands() async throws {
            for (reply, codes) in [("+OK\r\n:7\r\n", [RedisError.Code.connectionClosed]),
                                   ("+OK\r\n:7\r\n$5\r\nab", [.protocolViolation, .connectionClosed])] {
                try await withFakeServer(reply: reply, closeAfter: true, once: true) { port in
                    var configuration = RedisConfiguration(host: "127.0.0.1", port: port)
                    configuration.commandTimeout = .seconds(5)
                    configuration.usesRESP3 = false  // the fake server answers the pipeline's bytes, not a HELLO
                    let client = RedisClient(configuration: configuration)
                    let results = await client.send(pipeline: (0..<4).map { RedisCommand("GET", key: "k\($0)", [.string("k\($0)")]) })
                    #expect(results.count == 4)
                    #expect((try? results[0].get()) == .simpleString("OK"))
                    #expect((try? results[1].get()) == .integer(7))
                    for result in results[2...] {
                        guard case .failure(let error) = result else {
                            Issue.record("no reply was sent for it: \(result)")
                            return
                        }
                        #expect(codes.contains(error.code), "\(error)")
                        #expect(!error.message.isEmpty)
                    }
                    await client.close()
                }
            }
        }

        /// A server before Redis 6 answers `HELLO` with an unknown-command error: the
        /// connection falls back to RESP2 and authenticates with `AUTH`.
        @Test func aServerWithoutHelloGetsRESP2AndAuth() async throws {
            let replies = ["-ERR unknown command 'HELLO'\r\n", "+OK\r\n", "$2\r\nv1\r\n"]
            try await withFakeServer(makeHandler: { ScriptedReplies(replies) }) { port in
                var configuration = RedisConfiguration(host: "127.0.0.1", port: port)
                configuration.password = "secret"
                let client = RedisClient(configuration: configuration)
                let value = try await client.get("k")
                #expect(value == ByteBuffer(string: "v1"))
                await client.close()
            }
        }

        /// A `HELLO` refused for another reason (a wrong password) fails the connect: no fallback.
        @Test func aHelloRefusedForItsPasswordFailsTheConnect() async throws {
            let replies = ["-WRONGPASS invalid username-password pair\r\n", "+OK\r\n", "$2\r\nv1\r\n"]
            try await withFakeServer(makeHandler: { ScriptedReplies(replies) }) { port in
                var configuration = RedisConfiguration(host: "127.0.0.1", port: port)
                configuration.password = "wrong"
                let client = RedisClient(configuration: configuration)
                do {
                    _ = try await client.get("k")
                    Issue.record("a wrong password must fail")
                } catch {
                    #expect((error as? RedisError)?.code == .serverError)
                    #expect("\(error)".contains("WRONGPASS"), "\(error)")
                }
                await client.close()
            }
        }
    }
}
#endif  // Redis
