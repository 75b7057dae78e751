#if Redis
import Logging
import NIOCore
import NIOPosix
import Stash

/// A dedicated, never pooled, connection subscribed to one pub/sub channel,
/// resubscribing after it is lost.
///
/// A subscribed connection can run no other command, so it is kept apart from
/// the command pools. When the connection drops, it reconnects with backoff,
/// trying each candidate server in turn (any node of a cluster receives every
/// `PUBLISH`). It calls `onLost` when the connection drops and `onResubscribe`
/// once subscribed again: messages sent meanwhile are lost, and the caller must
/// assume anything may have changed. Retries are at least every
/// ``maximumResubscribeDelay``, whatever the candidates' reconnect delays: one
/// connection's retries are cheap, and the subscription coming back is how its
/// owner learns that the server answers again.
///
/// Thread-safety: safe to use from any thread or task. `onMessage` runs on the connection's event
/// loop thread; `onLost` and `onResubscribe` run on the subscriber's own task.
package final class RedisSubscriber: Sendable {
    private struct State {
        var connection: RedisConnection?
        var task: Task<Void, Never>?
        var stopped = false
    }

    private let candidates: [RedisConfiguration]
    private let channel: String
    private let group: any EventLoopGroup
    private let logger: Logger
    private let onMessage: @Sendable (ByteBuffer) -> Void
    private let onLost: @Sendable () -> Void
    private let onResubscribe: @Sendable () async -> Void
    private let state = LockedValue(State())

    /// Creates a subscriber; ``start()`` connects it.
    ///
    /// - Parameters:
    ///   - candidates: The servers to subscribe on, tried in turn; at least one.
    ///   - channel: The channel's name.
    ///   - eventLoopGroup: The event loops. Default NIO's shared singleton group.
    ///   - logger: Where a lost subscription is logged (once per loss). Default labelled `Stash.RedisSubscriber`.
    ///   - onMessage: Called with each message's payload.
    ///   - onLost: Called when the subscription drops, before any attempt to restore it. Default: nothing.
    ///   - onResubscribe: Called after a lost subscription is restored; a loss after that is
    ///     reported only once it returns.
    package init(candidates: [RedisConfiguration], channel: String,
                eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
                logger: Logger = Logger(label: "Stash.RedisSubscriber"),
                onMessage: @escaping @Sendable (ByteBuffer) -> Void,
                onLost: @escaping @Sendable () -> Void = {},
                onResubscribe: @escaping @Sendable () async -> Void) {
        precondition(!candidates.isEmpty, "a subscriber needs at least one server")
        self.candidates = candidates
        self.channel = channel
        self.group = eventLoopGroup
        self.logger = logger
        self.onMessage = onMessage
        self.onLost = onLost
        self.onResubscribe = onResubscribe
    }

    /// The longest wait between two attempts to restore a lost subscription: 200 ms, or the
    /// candidate's ``RedisConfiguration/maximumReconnectDelay`` when that is shorter.
    package static var maximumResubscribeDelay: TimeAmount { .milliseconds(200) }

    /// Subscribes, waiting until the first server confirms, then keeps the subscription alive in the background.
    ///
    /// - Throws: ``RedisError`` when no candidate accepts the subscription at first.
    package func start() async throws(RedisError) {
        var lastError: RedisError?
        for candidate in candidates {
            do {
                let connection = try await subscribe(candidate)
                let task = Task { await self.keepAlive(connection, candidateIndex: 0) }
                state.withLock { $0.task = task }
                return
            } catch {
                lastError = RedisClient.redisError(error)
            }
        }
        throw RedisError(.connectionFailed, "no server accepted the subscription to \(channel)", cause: lastError)
    }

    /// Unsubscribes and closes the connection; no callback runs afterwards.
    package func stop() async {
        let (connection, task): (RedisConnection?, Task<Void, Never>?) = state.withLock { state in
            state.stopped = true
            return (state.connection, state.task)
        }
        task?.cancel()
        if let connection { try? await connection.close().get() }
        await task?.value
    }

    private func subscribe(_ configuration: RedisConfiguration) async throws -> RedisConnection {
        let connection = try await RedisConnection.connect(configuration: configuration, eventLoop: group.next()).get()
        let onMessage = self.onMessage
        let channel = self.channel
        try await connection.channel.eventLoop.submit {
            connection.setMessageHandler { value in
                guard let elements = value.elements, elements.count >= 3,
                      elements[elements.count - 2].string == channel,
                      let payload = elements[elements.count - 1].bytes else { return }
                onMessage(payload)
            }
        }.get()
        _ = try await connection.outcome(of: RedisCommand("SUBSCRIBE", [.string(channel)])).get()
        let stopped: Bool = state.withLock { state in
            if !state.stopped { state.connection = connection }
            return state.stopped
        }
        if stopped {
            _ = try? await connection.close().get()
            throw RedisError(.connectionClosed, "the subscriber was stopped")
        }
        return connection
    }

    private func keepAlive(_ first: RedisConnection, candidateIndex: Int) async {
        var connection = first
        var index = candidateIndex
        while true {
            try? await connection.channel.closeFuture.get()
            if state.withLock({ $0.stopped }) || Task.isCancelled { return }
            // Debug only: the owner hears of it (`onLost`), and a `Cache` logs it as part of its outage.
            logger.debug("Redis subscription lost; resubscribing", metadata: ["channel": "\(channel)"])
            onLost()
            var delay = min(candidates[index].initialReconnectDelay, Self.maximumResubscribeDelay)
            while true {
                if state.withLock({ $0.stopped }) || Task.isCancelled { return }
                do {
                    connection = try await subscribe(candidates[index])
                    logger.debug("Redis subscription restored", metadata: ["channel": "\(channel)"])
                    await onResubscribe()
                    break
                } catch {
                    index = (index + 1) % candidates.count
                    try? await Task.sleep(nanoseconds: UInt64(max(delay.nanoseconds, 10_000_000)))
                    delay = min(candidates[index].maximumReconnectDelay, Self.maximumResubscribeDelay,
                                .nanoseconds(delay.nanoseconds * 2))
                }
            }
        }
    }
}
#endif  // Redis
