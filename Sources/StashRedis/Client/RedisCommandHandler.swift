import NIOCore

/// The last stage of a connection's pipeline: pairs each reply with the command
/// that asked for it, in order, so that any number of commands can be in flight
/// (pipelining).
///
/// Commands whose reply is late past the command timeout fail every pending
/// command with `.timeout` and close the channel, since the replies' order can no
/// longer be trusted. A decoding error or a closed channel fails every pending
/// command too. Messages of a subscribed connection (RESP2 `message`/`pmessage`
/// arrays) and RESP3 pushes go to ``onMessage`` instead, except a push confirming
/// a `SUBSCRIBE`, which is that command's reply; a push with no ``onMessage`` is dropped.
///
/// Runs on its channel's event loop only.
final class RedisCommandHandler: ChannelDuplexHandler {
    typealias InboundIn = RESPValue
    typealias OutboundIn = Request
    typealias OutboundOut = RedisCommand

    /// A command and the promise its reply completes.
    struct Request: Sendable {
        var command: RedisCommand
        var promise: EventLoopPromise<RESPValue>
    }

    private struct Pending {
        var promise: EventLoopPromise<RESPValue>
        var deadline: NIODeadline
    }

    private var pending = CircularBuffer<Pending>(initialCapacity: 64)
    private let commandTimeout: TimeAmount
    private var timeoutCheck: RepeatedTask?
    private var failure: RedisError?
    /// Called on the event loop for each pub/sub message.
    var onMessage: ((RESPValue) -> Void)?

    init(commandTimeout: TimeAmount) {
        self.commandTimeout = commandTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let interval = TimeAmount.nanoseconds(max(commandTimeout.nanoseconds / 4, 1_000_000))
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timeoutCheck = context.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
            let (handler, context) = loopBound.value
            handler.checkTimeouts(context: context)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timeoutCheck?.cancel()
        timeoutCheck = nil
        if failure == nil { failure = RedisError(.connectionClosed, "the connection's handler was removed") }
        failAll(failure!)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let request = Self.unwrapOutboundIn(data)
        if let failure {
            request.promise.fail(failure)
            promise?.fail(failure)
            return
        }
        pending.append(Pending(promise: request.promise, deadline: .now() + commandTimeout))
        context.write(Self.wrapOutboundOut(request.command), promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let value = Self.unwrapInboundIn(data)
        if Self.isOutOfBand(value) {
            onMessage?(value)  // a push nobody listens for is dropped, never taken for a reply
            return
        }
        if let onMessage, Self.isRESP2Message(value) {
            onMessage(value)
            return
        }
        guard let next = pending.popFirst() else {
            // A reply nobody asked for: the stream is out of step, so nothing after it can be trusted.
            fail(context: context, RedisError(.protocolViolation, "the server sent a reply with no command waiting for it"))
            return
        }
        if case .error(let message) = value {
            next.promise.fail(RedisError(.serverError, message))
        } else {
            next.promise.succeed(value)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let redisError = error as? RedisError
            ?? RedisError(.connectionClosed, "the connection failed: \(error)", cause: error)
        fail(context: context, redisError)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if failure == nil { failure = RedisError(.connectionClosed, "the connection closed") }
        failAll(failure!)
        timeoutCheck?.cancel()
        context.fireChannelInactive()
    }

    private func checkTimeouts(context: ChannelHandlerContext) {
        guard let first = pending.first, first.deadline < .now() else { return }
        let milliseconds = commandTimeout.nanoseconds / 1_000_000
        fail(context: context, RedisError(.timeout, "no reply within the command timeout (\(milliseconds) ms)"))
    }

    private func fail(context: ChannelHandlerContext, _ error: RedisError) {
        if failure == nil { failure = error }
        failAll(error)
        context.close(promise: nil)
    }

    private func failAll(_ error: RedisError) {
        while let next = pending.popFirst() {
            next.promise.fail(error)
        }
    }

    /// Whether `value` is a RESP3 push that answers no command: every push but
    /// the confirmation of a `SUBSCRIBE`-like command, which is that command's reply.
    static func isOutOfBand(_ value: RESPValue) -> Bool {
        guard case .push(let elements) = value else { return false }
        guard let kind = elements.first?.string?.lowercased() else { return true }
        return !subscriptionReplies.contains(kind)
    }

    private static let subscriptionReplies: Set<String> = [
        "subscribe", "unsubscribe", "psubscribe", "punsubscribe", "ssubscribe", "sunsubscribe",
    ]

    /// Whether `value` is a RESP2 pub/sub message, on a subscribed connection.
    private static func isRESP2Message(_ value: RESPValue) -> Bool {
        guard case .array(let elements) = value, let kind = elements.first?.string else { return false }
        return (kind == "message" && elements.count == 3) || (kind == "pmessage" && elements.count == 4)
    }
}
