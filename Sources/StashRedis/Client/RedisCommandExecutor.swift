#if Redis
import NIOCore

/// Something that runs Redis commands: one server's ``RedisClient`` or a
/// ``RedisClusterClient`` that routes each command to the node owning its key.
///
/// The tier and the lock are written against this protocol, so they work the
/// same on one server and on a cluster.
///
/// Thread-safety: conformers are safe to call from any thread or task.
package protocol RedisCommandExecutor: Sendable {
    /// Sends one command and returns its reply.
    ///
    /// - Parameter command: The command; its ``RedisCommand/routingKey`` routes it in a cluster.
    /// - Returns: The reply. An error reply is thrown, never returned.
    /// - Throws: ``RedisError``: `.serverError` with the server's message, or a
    ///   connection, timeout or protocol failure.
    func send(_ command: RedisCommand) async throws(RedisError) -> RESPValue

    /// Sends several commands in one write (pipelining) and returns every outcome, in order.
    ///
    /// - Parameter commands: The commands. A cluster client sends one write per node involved.
    /// - Returns: One result per command.
    func send(pipeline commands: [RedisCommand]) async -> [Result<RESPValue, RedisError>]

    /// One client per primary server (a single server's client returns itself),
    /// for commands that must run on every node, such as `SCAN`.
    ///
    /// - Throws: ``RedisError`` when the cluster's topology cannot be read.
    func primaryClients() async throws(RedisError) -> [RedisClient]
}
#endif  // Redis
