#if Redis
import NIOCore
import NIOPosix
import NIOSSL
import Stash

/// One TCP (or TLS) connection to a Redis server, with commands pipelined on it.
///
/// Made by ``connect(configuration:eventLoop:)``, which also sends `HELLO 3`
/// (RESP3, where the server offers it), `AUTH` and `SELECT`. Any thread may send; the channel's event loop does the work.
final class RedisConnection: Sendable {
    let channel: any Channel
    private let handler: NIOLoopBound<RedisCommandHandler>
    private let outbox = LockedValue(Outbox())

    private struct Outbox {
        var requests: [RedisCommandHandler.Request] = []
        var drainScheduled = false
    }

    private init(channel: any Channel, handler: RedisCommandHandler) {
        self.channel = channel
        self.handler = NIOLoopBound(handler, eventLoop: channel.eventLoop)
    }

    /// Whether the channel is still open.
    var isActive: Bool { channel.isActive }

    /// Sends one command; the future completes with its reply, or fails with a ``RedisError``.
    ///
    /// For the handshake in ``connect(configuration:eventLoop:)``, which runs in a future
    /// chain; callers in a task use ``outcome(of:)``.
    func send(_ command: RedisCommand) -> EventLoopFuture<RESPValue> {
        let promise = channel.eventLoop.makePromise(of: RESPValue.self)
        enqueue(CollectionOfOne(request(CollectionOfOne(command), replies: .promise(promise))))
        return promise.futureResult
    }

    /// Sends several commands in one flush; the futures complete in order.
    ///
    /// For the few commands that set a connection up; callers in a task use ``outcomes(of:)``.
    func send(pipeline commands: [RedisCommand]) -> [EventLoopFuture<RESPValue>] {
        var futures: [EventLoopFuture<RESPValue>] = []
        futures.reserveCapacity(commands.count)
        var requests: [RedisCommandHandler.Request] = []
        requests.reserveCapacity(commands.count)
        for command in commands {
            let promise = channel.eventLoop.makePromise(of: RESPValue.self)
            futures.append(promise.futureResult)
            requests.append(request(CollectionOfOne(command), replies: .promise(promise)))
        }
        enqueue(requests)
        return futures
    }

    /// Sends one command and waits for its outcome: the reply, or the error
    /// that stands for it (an error reply is `.serverError`).
    func outcome(of command: RedisCommand) async -> Result<RESPValue, RedisError> {
        let bytes = RESPEncoder.encode(CollectionOfOne(command), allocator: channel.allocator)
        return await withUnsafeContinuation { continuation in
            enqueue(CollectionOfOne(RedisCommandHandler.Request(bytes: bytes, count: 1, replies: .outcome(continuation))))
        }
    }

    /// Sends several commands in one write and waits once for all of their
    /// outcomes, in order.
    ///
    /// - Complexity: One buffer for the commands, one wake-up when the last reply arrives.
    func outcomes(of commands: [RedisCommand]) async -> [Result<RESPValue, RedisError>] {
        if commands.isEmpty { return [] }
        let bytes = RESPEncoder.encode(commands, allocator: channel.allocator)
        return await withUnsafeContinuation { continuation in
            enqueue(CollectionOfOne(RedisCommandHandler.Request(bytes: bytes, count: commands.count, replies: .outcomes(continuation))))
        }
    }

    private func request(_ commands: some Collection<RedisCommand>,
                         replies: RedisCommandHandler.Replies) -> RedisCommandHandler.Request {
        RedisCommandHandler.Request(bytes: RESPEncoder.encode(commands, allocator: channel.allocator),
                                    count: commands.count, replies: replies)
    }

    /// Queues requests and, unless a drain is already scheduled, schedules one on
    /// the event loop. Commands sent by many tasks meanwhile leave in one flush
    /// (automatic pipelining), in the order they were queued.
    ///
    /// Every request's replies are completed exactly once: by the command handler,
    /// or here when the channel has closed.
    private func enqueue(_ requests: some Collection<RedisCommandHandler.Request>) {
        let schedule: Bool = outbox.withLock { outbox in
            outbox.requests.append(contentsOf: requests)
            if outbox.drainScheduled { return false }
            outbox.drainScheduled = true
            return true
        }
        if schedule {
            channel.eventLoop.execute { self.drain() }
        }
    }

    private func drain() {
        let requests: [RedisCommandHandler.Request] = outbox.withLock { outbox in
            outbox.drainScheduled = false
            var taken: [RedisCommandHandler.Request] = []
            swap(&taken, &outbox.requests)
            return taken
        }
        guard channel.isActive else {
            // A write to a closed channel would fail without reaching the command
            // handler, leaving these requests unanswered.
            let error = RedisError(.connectionClosed, "the connection closed before the command was sent")
            for request in requests { request.replies.fail(error, count: request.count) }
            return
        }
        for request in requests { channel.write(request, promise: nil) }
        channel.flush()
    }

    /// Sets the callback for pub/sub messages. Must be called on the event loop.
    func setMessageHandler(_ body: @escaping (RESPValue) -> Void) {
        handler.value.onMessage = body
    }

    /// Closes the channel; pending commands fail with `.connectionClosed`.
    func close() -> EventLoopFuture<Void> {
        let promise = channel.eventLoop.makePromise(of: Void.self)
        channel.close(promise: promise)
        return promise.futureResult.recover { _ in }
    }

    /// Connects, then sends `HELLO 3` (falling back to RESP2), `AUTH` and `SELECT` as the configuration asks.
    ///
    /// - Throws: ``RedisError`` `.connectionFailed` (with the cause) when the
    ///   connect or TLS setup fails, `.timeout` past the connect timeout, or the
    ///   server's error for `AUTH`/`SELECT`.
    static func connect(configuration: RedisConfiguration, eventLoop: any EventLoop) -> EventLoopFuture<RedisConnection> {
        let sslContext: NIOSSLContext?
        do {
            sslContext = try configuration.tls.map { try NIOSSLContext(configuration: $0) }
        } catch {
            return eventLoop.makeFailedFuture(RedisError(.connectionFailed, "the TLS configuration is unusable", cause: error))
        }
        let serverName = configuration.tlsServerName ?? configuration.host
        let parser = RESPParser(maximumBulkLength: configuration.maximumReplyBulkLength)
        let timeout = configuration.commandTimeout
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(configuration.connectTimeout)
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    if let sslContext {
                        let isAddress = (try? SocketAddress(ipAddress: serverName, port: 0)) != nil
                        try sync.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: isAddress ? nil : serverName))
                    }
                    try sync.addHandler(ByteToMessageHandler(RESPDecoder(parser: parser)))
                    try sync.addHandler(RedisCommandHandler(commandTimeout: timeout))
                }
            }
        let address = "\(configuration.host):\(configuration.port)"
        return bootstrap.connect(host: configuration.host, port: configuration.port)
            .flatMapErrorThrowing { error in
                if case ChannelError.connectTimeout = error {
                    throw RedisError(.timeout, "connecting to \(address) took longer than the connect timeout", cause: error)
                }
                throw RedisError(.connectionFailed, "could not connect to \(address)", cause: error)
            }
            .flatMapThrowing { channel in
                let handler = try channel.pipeline.syncOperations.handler(type: RedisCommandHandler.self)
                return RedisConnection(channel: channel, handler: handler)
            }
            .flatMap { connection in connection.handshake(configuration) }
    }

    /// ``negotiate(_:)``, then this connection; on failure, closes it and fails.
    private func handshake(_ configuration: RedisConfiguration) -> EventLoopFuture<RedisConnection> {
        negotiate(configuration).map { () -> RedisConnection in self }.flatMapError { error in
            self.close().flatMapThrowing { () -> RedisConnection in throw error }
        }
    }

    /// `HELLO 3` (with `AUTH`) where the server offers RESP3, else RESP2's
    /// `AUTH`; then `SELECT`, as the configuration asks.
    private func negotiate(_ configuration: RedisConfiguration) -> EventLoopFuture<Void> {
        let loop = channel.eventLoop
        var authenticated = loop.makeSucceededVoidFuture()
        if configuration.usesRESP3 {
            var hello: [RedisCommand.Argument] = [.integer(3)]
            if let password = configuration.password {
                hello += [.string("AUTH"), .string(configuration.username ?? "default"), .string(password)]
            }
            authenticated = send(RedisCommand("HELLO", hello)).map { _ in }.flatMapError { error in
                guard let error = error as? RedisError, Self.refusesRESP3(error) else {
                    return loop.makeFailedFuture(error)
                }
                return self.sendAll(Self.authentication(configuration))
            }
        } else {
            authenticated = sendAll(Self.authentication(configuration))
        }
        guard configuration.database != 0 else { return authenticated }
        return authenticated.flatMap {
            self.sendAll([RedisCommand("SELECT", [.integer(Int64(configuration.database))])])
        }
    }

    /// RESP2's `AUTH`, if the configuration has a password.
    private static func authentication(_ configuration: RedisConfiguration) -> [RedisCommand] {
        guard let password = configuration.password else { return [] }
        if let username = configuration.username {
            return [RedisCommand("AUTH", [.string(username), .string(password)])]
        }
        return [RedisCommand("AUTH", [.string(password)])]
    }

    /// Whether `HELLO 3` failed because the server has no `HELLO` (Redis before 6)
    /// or no protocol 3, rather than, say, for a wrong password.
    static func refusesRESP3(_ error: RedisError) -> Bool {
        error.code == .serverError && (error.message.hasPrefix("ERR unknown command") || error.message.hasPrefix("NOPROTO"))
    }

    private func sendAll(_ commands: [RedisCommand]) -> EventLoopFuture<Void> {
        guard !commands.isEmpty else { return channel.eventLoop.makeSucceededVoidFuture() }
        return EventLoopFuture.andAllSucceed(send(pipeline: commands), on: channel.eventLoop)
    }
}
#endif  // Redis
