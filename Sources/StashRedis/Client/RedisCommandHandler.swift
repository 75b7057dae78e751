#if Redis
import NIOCore

/// The last stage of a connection's pipeline: pairs each reply with the command
/// that asked for it, in order, so that any number of commands can be in flight
/// (pipelining).
///
/// Requests arrive already encoded (``Request``), one or many commands each, and
/// leave as one buffer each. A request of many commands (a caller's pipeline) is
/// answered once, with every outcome in order, when its last reply arrives, so a
/// pipeline costs one wake-up of its caller, not one per command.
///
/// Commands whose reply is late past the command timeout fail every pending
/// command with `.timeout` and close the channel, since the replies' order can no
/// longer be trusted. One timer, armed for the oldest pending command's deadline
/// and moved on to the next one's when it fires, so a command fails at its
/// deadline (plus the event loop's latency), and an idle connection has no timer. A decoding error or a closed channel fails every pending
/// command too; the commands of a pipeline that were already answered keep their
/// replies. Messages of a subscribed connection (RESP2 `message`/`pmessage`
/// arrays) and RESP3 pushes go to ``onMessage`` instead, except a push confirming
/// a `SUBSCRIBE`, which is that command's reply; a push with no ``onMessage`` is dropped.
///
/// Runs on its channel's event loop only.
final class RedisCommandHandler: ChannelDuplexHandler {
    typealias InboundIn = RESPValue
    typealias OutboundIn = Request
    typealias OutboundOut = ByteBuffer

    /// One command's outcome: its reply, or the error that stands for it (an error
    /// reply is a `.serverError`).
    typealias Outcome = Result<RESPValue, RedisError>

    /// Where the replies to one request go; each is completed exactly once.
    enum Replies: Sendable {
        /// One command, whose reply completes a promise (an error reply fails it).
        case promise(EventLoopPromise<RESPValue>)
        /// One command, whose outcome resumes a waiting task.
        case outcome(UnsafeContinuation<Outcome, Never>)
        /// Several commands, whose outcomes, in order, resume a waiting task once.
        case outcomes(UnsafeContinuation<[Outcome], Never>)

        /// Completes these replies with `answered` followed by `error` for each of
        /// the `count` commands not answered yet.
        func fail(_ error: RedisError, count: Int, answered: [Outcome] = []) {
            switch self {
            case .promise(let promise):
                promise.fail(error)
            case .outcome(let continuation):
                continuation.resume(returning: .failure(error))
            case .outcomes(let continuation):
                var outcomes = answered
                outcomes.reserveCapacity(count)
                while outcomes.count < count { outcomes.append(.failure(error)) }
                continuation.resume(returning: outcomes)
            }
        }
    }

    /// Commands encoded in RESP, how many there are, and where their replies go.
    struct Request: Sendable {
        var bytes: ByteBuffer
        var count: Int
        var replies: Replies
    }

    private struct Pending {
        var count: Int
        var replies: Replies
        var deadline: NIODeadline
    }

    private var pending = CircularBuffer<Pending>(initialCapacity: 16)
    /// The outcomes so far of the request at the head of `pending`, when it is several commands.
    private var headOutcomes: [Outcome] = []
    private let commandTimeout: TimeAmount
    /// Fires at the oldest pending command's deadline, or later; `nil` while nothing is pending.
    private var timeoutCheck: Scheduled<Void>?
    private var failure: RedisError?
    /// Called on the event loop for each pub/sub message.
    var onMessage: ((RESPValue) -> Void)?

    init(commandTimeout: TimeAmount) {
        self.commandTimeout = commandTimeout
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
            request.replies.fail(failure, count: request.count)
            promise?.fail(failure)
            return
        }
        pending.append(Pending(count: request.count, replies: request.replies, deadline: context.eventLoop.now + commandTimeout))
        if timeoutCheck == nil { scheduleTimeoutCheck(context: context) }
        context.write(Self.wrapOutboundOut(request.bytes), promise: promise)
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
        guard let head = pending.first else {
            // A reply nobody asked for: the stream is out of step, so nothing after it can be trusted.
            fail(context: context, RedisError(.protocolViolation, "the server sent a reply with no command waiting for it"))
            return
        }
        let outcome: Outcome
        if case .error(let message) = value {
            outcome = .failure(RedisError(.serverError, message))
        } else {
            outcome = .success(value)
        }
        // The request leaves the queue before its waiter runs, since a promise's
        // callbacks run right here and may send or close.
        switch head.replies {
        case .promise(let promise):
            pending.removeFirst()
            switch outcome {
            case .success(let reply): promise.succeed(reply)
            case .failure(let error): promise.fail(error)
            }
        case .outcome(let continuation):
            pending.removeFirst()
            continuation.resume(returning: outcome)
        case .outcomes(let continuation):
            if headOutcomes.isEmpty { headOutcomes.reserveCapacity(head.count) }
            headOutcomes.append(outcome)
            guard headOutcomes.count == head.count else { return }
            pending.removeFirst()
            let outcomes = headOutcomes
            headOutcomes = []
            continuation.resume(returning: outcomes)
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

    /// Arms the timer for the oldest pending command's deadline (its deadline is the earliest:
    /// every command gets the same timeout, in the order they are written).
    private func scheduleTimeoutCheck(context: ChannelHandlerContext) {
        guard failure == nil, let first = pending.first else { return }
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timeoutCheck = context.eventLoop.scheduleTask(deadline: first.deadline) {
            let (handler, context) = loopBound.value
            handler.checkTimeouts(context: context)
        }
    }

    /// Fails everything if the oldest pending command is past its deadline; otherwise arms the
    /// timer for it (the command the timer was armed for has been answered since).
    private func checkTimeouts(context: ChannelHandlerContext) {
        timeoutCheck = nil
        guard let first = pending.first else { return }
        guard first.deadline <= context.eventLoop.now else {
            scheduleTimeoutCheck(context: context)
            return
        }
        let milliseconds = commandTimeout.nanoseconds / 1_000_000
        fail(context: context, RedisError(.timeout, "no reply within the command timeout (\(milliseconds) ms)"))
    }

    private func fail(context: ChannelHandlerContext, _ error: RedisError) {
        if failure == nil { failure = error }
        failAll(error)
        context.close(promise: nil)
    }

    /// Fails every pending command; the head request keeps the outcomes it already has.
    private func failAll(_ error: RedisError) {
        var answered = headOutcomes
        headOutcomes = []
        while let next = pending.popFirst() {
            next.replies.fail(error, count: next.count, answered: answered)
            answered = []
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
#endif  // Redis
