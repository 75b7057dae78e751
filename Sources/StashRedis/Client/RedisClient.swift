#if Redis
import Logging
import NIOCore
import NIOPosix

/// A client for one Redis server: a pool of pipelined connections with connect
/// and command timeouts, reconnection with backoff, `AUTH`, `SELECT` and TLS.
/// Each connection asks for RESP3 (`HELLO 3`) and falls back to RESP2 on a
/// server before Redis 6 (see ``RedisConfiguration/usesRESP3``).
///
/// ```swift
/// let client = RedisClient(configuration: RedisConfiguration(host: "127.0.0.1", port: 6379))
/// let tier = RedisCacheTier(client: client, codec: DiskCodec<String>.string)
/// // ... use the tier, alone or as a Cache's remote tier ...
/// await tier.close()
/// await client.close()
/// ```
///
/// Its commands are the package's own: the client exists to carry ``RedisCacheTier``.
///
/// Connections open lazily on first use, so creating a client never blocks and
/// never fails. Every command is async and never blocks a thread.
///
/// Thread-safety: safe to use from any thread or task; commands from many tasks
/// share the pool's connections, pipelined.
public final class RedisClient: RedisCommandExecutor {
    /// The configuration the client was created with.
    public let configuration: RedisConfiguration
    let pool: RedisConnectionPool

    /// Creates a client. Connects lazily.
    ///
    /// - Parameters:
    ///   - configuration: Where and how to connect.
    ///   - eventLoopGroup: The event loops the connections run on. Default NIO's shared singleton group.
    ///   - logger: Where connection problems are logged. Default a logger labelled `Stash.RedisClient`.
    /// - Complexity: O(1); no I/O.
    public init(configuration: RedisConfiguration,
                eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
                logger: Logger = Logger(label: "Stash.RedisClient")) {
        self.configuration = configuration
        pool = RedisConnectionPool(configuration: configuration, group: eventLoopGroup, logger: logger)
    }

    /// Sends one command and returns its reply.
    ///
    /// - Parameter command: The command.
    /// - Returns: The reply. An error reply is thrown.
    /// - Throws: ``RedisError``: `.serverError` with the server's message,
    ///   `.unavailable` while reconnecting backs off, `.timeout`, `.connectionFailed`,
    ///   `.connectionClosed` or `.protocolViolation`.
    /// - Complexity: One round trip; pipelined with other callers' commands.
    package func send(_ command: RedisCommand) async throws(RedisError) -> RESPValue {
        try await pool.connection().outcome(of: command).get()
    }

    /// Sends several commands in one write and returns every outcome, in order.
    ///
    /// - Parameter commands: The commands.
    /// - Returns: One result per command: its reply, `.serverError` for an error
    ///   reply, or the connection's failure (commands answered before a failure keep their replies).
    /// - Complexity: One round trip for all of them; the caller is woken once, when the last reply arrives.
    package func send(pipeline commands: [RedisCommand]) async -> [Result<RESPValue, RedisError>] {
        let connection: RedisConnection
        do {
            connection = try await pool.connection()
        } catch {
            return commands.map { _ in .failure(error) }
        }
        return await connection.outcomes(of: commands)
    }

    /// Returns `[self]`: one server is its own only primary.
    ///
    /// - Returns: This client.
    package func primaryClients() async throws(RedisError) -> [RedisClient] { [self] }

    /// Closes every connection. Later commands fail with `.connectionClosed`.
    ///
    /// Waits for the connections to close; pending commands fail.
    public func close() async {
        await pool.close()
    }

    static func redisError(_ error: any Error) -> RedisError {
        if let error = error as? RedisError { return error }
        return RedisError(.connectionClosed, "the connection failed: \(error)", cause: error)
    }
}
#endif  // Redis
