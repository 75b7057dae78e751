#if Redis
import NIOCore
import NIOEmbedded
import Stash
import Testing
@testable import StashRedis

extension RedisSuites {
    /// How replies and RESP3 pushes are told apart on one connection.
    @Suite(.timeLimit(.minutes(5))) struct RedisCommandHandlerTests {
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

        @Test func aPushIsAMessageButASubscribeConfirmationAnswersItsCommand() throws {
            let handler = RedisCommandHandler(commandTimeout: .seconds(60))
            let channel = EmbeddedChannel(handler: handler)
            var messages: [RESPValue] = []
            handler.onMessage = { messages.append($0) }
            let subscribed = try send(RedisCommand("SUBSCRIBE", ["ch"]), on: channel)
            let confirmation = RESPValue.push([bulk("subscribe"), bulk("ch"), .integer(1)])
            let message = RESPValue.push([bulk("message"), bulk("ch"), bulk("x")])

            try channel.writeInbound(confirmation)
            try channel.writeInbound(message)

            #expect(subscribed() == confirmation)
            #expect(messages == [message])
            _ = try channel.finish()
        }

        @Test func aPushNobodyListensForIsDroppedNotTakenForAReply() throws {
            let channel = EmbeddedChannel(handler: RedisCommandHandler(commandTimeout: .seconds(60)))
            let reply = try send(RedisCommand("GET", key: "k", ["k"]), on: channel)

            try channel.writeInbound(RESPValue.push([bulk("invalidate"), .array([bulk("k")])]))
            #expect(reply() == nil)
            try channel.writeInbound(bulk("v"))

            #expect(reply() == bulk("v"))
            _ = try channel.finish()
        }

        /// A command fails at its deadline, not at the next of a periodic check's ticks (issue #28:
        /// checked every quarter of the timeout, a hung command waited up to 1.25 times it), and a
        /// reply moves the timer on to the next command's deadline.
        @Test func aCommandTimesOutAtItsDeadline() throws {
            let loop = EmbeddedEventLoop()
            let channel = EmbeddedChannel(handler: RedisCommandHandler(commandTimeout: .milliseconds(1000)), loop: loop)
            let first = try send(RedisCommand("GET", key: "a", ["a"]), on: channel)
            loop.advanceTime(by: .milliseconds(400))
            let promise = loop.makePromise(of: RESPValue.self)
            let outcome = LockedValue<Result<RESPValue, any Error>?>(nil)
            promise.futureResult.whenComplete { result in outcome.withLock { $0 = result } }
            try channel.writeOutbound(RedisCommandHandler.Request(
                bytes: RESPEncoder.encode([RedisCommand("GET", key: "b", ["b"])], allocator: channel.allocator),
                count: 1, replies: .promise(promise)))

            loop.advanceTime(by: .milliseconds(500))  // 900 ms: the first is answered in time
            try channel.writeInbound(bulk("1"))
            #expect(first() == bulk("1"))
            loop.advanceTime(by: .milliseconds(499))  // 1,399 ms: the second has 1 ms left
            #expect(outcome.withLock { $0 } == nil)
            loop.advanceTime(by: .milliseconds(1))  // 1,400 ms: the second's deadline
            guard case .failure(let error as RedisError)? = outcome.withLock({ $0 }) else {
                Issue.record("the second command did not fail at its deadline: \(String(describing: outcome.withLock { $0 }))")
                return
            }
            #expect(error.code == .timeout)
            _ = try? channel.finish()
        }
    }
}
#endif  // Redis
