import NIOCore
import NIOPosix
import XCTest
@testable import StashRedis

/// A fake server on loopback that answers every command with fixed bytes, to
/// check that a truncated or malformed reply from the network gives a clear error.
final class RedisBadPeerTests: XCTestCase {
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

    private func withFakeServer(reply: String, closeAfter: Bool, once: Bool = false,
                                _ body: (Int) async throws -> Void) async throws {
        let bytes = Array(reply.utf8)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if once {
                        try channel.pipeline.syncOperations.addHandler(AnswersOnceThenCloses(reply: bytes))
                    } else {
                        try channel.pipeline.syncOperations.addHandler(FixedReply(reply: bytes, closeAfter: closeAfter))
                    }
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

    func testAMalformedReplyIsAProtocolViolation() async throws {
        try await withFakeServer(reply: "$3\r\nabcdef\r\n", closeAfter: false) { port in
            let client = client(port: port)
            do {
                _ = try await client.get("k")
                XCTFail("the reply is malformed")
            } catch {
                XCTAssertEqual((error as? RedisError)?.code, .protocolViolation)
                XCTAssertTrue("\(error)".contains("CRLF"), "\(error)")
            }
            await client.close()
        }
    }

    func testATruncatedReplyFailsWhenTheConnectionCloses() async throws {
        try await withFakeServer(reply: "$100\r\nabc", closeAfter: true) { port in
            let client = client(port: port)
            do {
                _ = try await client.get("k")
                XCTFail("the reply is truncated")
            } catch {
                let code = (error as? RedisError)?.code
                XCTAssertTrue(code == .protocolViolation || code == .connectionClosed, "\(error)")
            }
            await client.close()
        }
    }

    func testAHugeAnnouncedLengthFailsWithoutAllocating() async throws {
        try await withFakeServer(reply: "$4000000000\r\n", closeAfter: false) { port in
            var configuration = RedisConfiguration(host: "127.0.0.1", port: port)
            configuration.maximumReplyBulkLength = 1024 * 1024
            let client = RedisClient(configuration: configuration)
            do {
                _ = try await client.get("k")
                XCTFail("the reply is over the limit")
            } catch {
                XCTAssertEqual((error as? RedisError)?.code, .replyTooLarge)
            }
            await client.close()
        }
    }

    /// The connection dies mid-pipeline: the commands answered keep their replies,
    /// in order, and every other command fails with a clear error.
    func testAConnectionLostMidPipelineFailsOnlyTheUnansweredCommands() async throws {
        for (reply, codes) in [("+OK\r\n:7\r\n", [RedisError.Code.connectionClosed]),
                               ("+OK\r\n:7\r\n$5\r\nab", [.protocolViolation, .connectionClosed])] {
            try await withFakeServer(reply: reply, closeAfter: true, once: true) { port in
                let client = client(port: port)
                let results = await client.send(pipeline: (0..<4).map { RedisCommand("GET", key: "k\($0)", [.string("k\($0)")]) })
                XCTAssertEqual(results.count, 4)
                XCTAssertEqual(try results[0].get(), .simpleString("OK"))
                XCTAssertEqual(try results[1].get(), .integer(7))
                for result in results[2...] {
                    guard case .failure(let error) = result else { return XCTFail("no reply was sent for it: \(result)") }
                    XCTAssertTrue(codes.contains(error.code), "\(error)")
                    XCTAssertFalse(error.message.isEmpty)
                }
                await client.close()
            }
        }
    }
}
