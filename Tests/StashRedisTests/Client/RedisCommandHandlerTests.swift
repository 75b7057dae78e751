#if Redis
import NIOCore
import NIOEmbedded
import Stash
import XCTest
@testable import StashRedis

/// How replies and RESP3 pushes are told apart on one connection.
final class RedisCommandHandlerTests: XCTestCase {
    private func bulk(_ text: String) -> RESPValue { .bulkString(ByteBuffer(string: text)) }

    /// Sends `command` and returns a box that holds its reply once it arrives.
    private func send(_ command: RedisCommand, on channel: EmbeddedChannel) throws -> () -> RESPValue? {
        let promise = channel.eventLoop.makePromise(of: RESPValue.self)
        let reply = LockedValue<RESPValue?>(nil)
        promise.futureResult.whenSuccess { value in reply.withLock { $0 = value } }
        try channel.writeOutbound(RedisCommandHandler.Request(
            bytes: RESPEncoder.encode([command], allocator: channel.allocator), count: 1, replies: .promise(promise)))
        return { reply.withLock { $0 } }
    }

    func testAPushIsAMessageButASubscribeConfirmationAnswersItsCommand() throws {
        let handler = RedisCommandHandler(commandTimeout: .seconds(60))
        let channel = EmbeddedChannel(handler: handler)
        var messages: [RESPValue] = []
        handler.onMessage = { messages.append($0) }
        let subscribed = try send(RedisCommand("SUBSCRIBE", ["ch"]), on: channel)
        let confirmation = RESPValue.push([bulk("subscribe"), bulk("ch"), .integer(1)])
        let message = RESPValue.push([bulk("message"), bulk("ch"), bulk("x")])

        try channel.writeInbound(confirmation)
        try channel.writeInbound(message)

        XCTAssertEqual(subscribed(), confirmation)
        XCTAssertEqual(messages, [message])
        _ = try channel.finish()
    }

    func testAPushNobodyListensForIsDroppedNotTakenForAReply() throws {
        let channel = EmbeddedChannel(handler: RedisCommandHandler(commandTimeout: .seconds(60)))
        let reply = try send(RedisCommand("GET", key: "k", ["k"]), on: channel)

        try channel.writeInbound(RESPValue.push([bulk("invalidate"), .array([bulk("k")])]))
        XCTAssertNil(reply())
        try channel.writeInbound(bulk("v"))

        XCTAssertEqual(reply(), bulk("v"))
        _ = try channel.finish()
    }
}
#endif  // Redis
