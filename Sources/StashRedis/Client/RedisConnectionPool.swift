#if Redis
import Logging
import NIOCore
import Stash

/// A fixed number of pipelined connections to one server, opened lazily, each
/// reconnected with exponential backoff after it fails.
///
/// Callers are spread over the connections round robin. A slot whose last
/// connect failed refuses callers with `.unavailable` until its backoff delay has
/// passed, so an outage costs a failed connect per slot per delay, not per call.
///
/// Thread-safety: all state is behind one lock; connects run on the event loops.
final class RedisConnectionPool: Sendable {
    private enum Slot {
        case idle
        case connecting(EventLoopFuture<RedisConnection>)
        case connected(RedisConnection)
        case backingOff(until: NIODeadline, failures: Int, lastError: RedisError)
    }

    private struct State {
        var slots: [Slot]
        var next = 0
        var closed = false
    }

    let configuration: RedisConfiguration
    private let group: any EventLoopGroup
    private let state: LockedValue<State>
    private let logger: Logger

    init(configuration: RedisConfiguration, group: any EventLoopGroup, logger: Logger) {
        self.configuration = configuration
        self.group = group
        self.logger = logger
        state = LockedValue(State(slots: Array(repeating: .idle, count: max(1, configuration.poolSize))))
    }

    /// A connection, opening one if its slot has none.
    ///
    /// Returns at once, without leaving the calling thread, when the slot's
    /// connection is open (the usual case).
    ///
    /// - Throws: `.unavailable` while the slot backs off, `.connectionClosed`
    ///   once the pool is closed, or the connect's error.
    func connection() async throws(RedisError) -> RedisConnection {
        enum Decision {
            case use(RedisConnection)
            case wait(EventLoopFuture<RedisConnection>)
            case refuse(RedisError)
            case open(Int, failures: Int)
        }
        let decision: Decision = state.withLock { state in
            if state.closed { return .refuse(RedisError(.connectionClosed, "the client is closed")) }
            let index = state.next
            state.next = (index + 1) % state.slots.count
            switch state.slots[index] {
            case .connected(let connection) where connection.isActive:
                return .use(connection)
            case .connecting(let future):
                return .wait(future)
            case .backingOff(let until, let failures, let lastError):
                if NIODeadline.now() < until {
                    return .refuse(RedisError(.unavailable, "\(address) is unreachable; reconnecting after a backoff delay", cause: lastError))
                }
                return .open(index, failures: failures)
            case .idle, .connected:
                return .open(index, failures: 0)
            }
        }
        switch decision {
        case .use(let connection): return connection
        case .wait(let future): return try await Self.wait(for: future)
        case .refuse(let error): throw error
        case .open(let index, let failures): return try await open(slot: index, previousFailures: failures)
        }
    }

    private static func wait(for future: EventLoopFuture<RedisConnection>) async throws(RedisError) -> RedisConnection {
        do {
            return try await future.get()
        } catch {
            throw RedisClient.redisError(error)
        }
    }

    private var address: String { "\(configuration.host):\(configuration.port)" }

    private func open(slot index: Int, previousFailures: Int) async throws(RedisError) -> RedisConnection {
        let loop = group.next()
        let promise = loop.makePromise(of: RedisConnection.self)
        let proceed: Bool = state.withLock { state in
            // Another caller may have started this slot's connect meanwhile.
            if case .connecting = state.slots[index] { return false }
            if case .connected(let connection) = state.slots[index], connection.isActive { return false }
            state.slots[index] = .connecting(promise.futureResult)
            return true
        }
        guard proceed else {
            // Never handed out: complete it anyway, or NIO reports it as leaked (a fatal
            // error in debug builds) when it is released.
            promise.fail(RedisError(.connectionClosed, "another caller is already connecting this slot"))
            return try await connection()
        }
        RedisConnection.connect(configuration: configuration, eventLoop: loop).whenComplete { result in
            let closeNow: RedisConnection? = self.state.withLock { state in
                switch result {
                case .success(let connection):
                    if state.closed { return connection }
                    state.slots[index] = .connected(connection)
                case .failure(let error):
                    let failures = previousFailures + 1
                    let base = self.configuration.initialReconnectDelay.nanoseconds
                    let cap = self.configuration.maximumReconnectDelay.nanoseconds
                    let delay = min(cap, base << min(failures - 1, 20))
                    let redisError = error as? RedisError ?? RedisError(.connectionFailed, "could not connect to \(self.address)", cause: error)
                    state.slots[index] = .backingOff(until: .now() + .nanoseconds(delay), failures: failures, lastError: redisError)
                }
                return nil
            }
            if let closeNow { _ = closeNow.close() }
            promise.completeWith(result)
        }
        return try await Self.wait(for: promise.futureResult)
    }

    /// Closes every connection; later calls fail with `.connectionClosed`.
    func close() async {
        let connections: [RedisConnection] = state.withLock { state in
            state.closed = true
            let open = state.slots.compactMap { slot -> RedisConnection? in
                if case .connected(let connection) = slot { return connection }
                return nil
            }
            state.slots = state.slots.map { _ in .idle }
            return open
        }
        for connection in connections {
            try? await connection.close().get()
        }
    }
}
#endif  // Redis
