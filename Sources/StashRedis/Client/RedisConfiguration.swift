#if Redis
import NIOCore
import NIOSSL

/// How a ``RedisClient`` reaches one Redis server: address, credentials, TLS,
/// timeouts, pool size and limits.
///
/// ```swift
/// var configuration = RedisConfiguration(host: "127.0.0.1", port: 6379)
/// configuration.password = "secret"
/// configuration.database = 2
/// ```
///
/// Thread-safety: a value type, `Sendable`.
public struct RedisConfiguration: Sendable {
    /// The server's host name or address.
    public var host: String
    /// The server's TCP port. Default 6379.
    public var port: Int
    /// The ACL user for `AUTH`; `nil` (the default) sends `AUTH password` alone when a password is set.
    public var username: String?
    /// The password for `AUTH`; `nil` (the default) sends no `AUTH`.
    public var password: String?
    /// The database `SELECT`ed on every new connection. Default 0 (no `SELECT` sent).
    /// Redis Cluster has only database 0.
    public var database: Int
    /// TLS settings; `nil` (the default) connects in plain TCP.
    public var tls: TLSConfiguration?
    /// The name checked against the server's certificate; `nil` (the default) uses ``host``.
    public var tlsServerName: String?
    /// How long a TCP connect (and TLS handshake) may take. Default 1 second: a
    /// cache must fail fast and fall back to its local tiers.
    public var connectTimeout: TimeAmount
    /// How long a command may wait for its reply before it fails with `.timeout`
    /// and its connection is closed. Default 1 second, for the same reason.
    public var commandTimeout: TimeAmount
    /// The number of connections kept to the server. Commands are pipelined on
    /// each, so a few serve many concurrent callers. Default 4.
    public var poolSize: Int
    /// The first wait before reconnecting after a failed connect; doubles per
    /// failure up to ``maximumReconnectDelay``. Default 50 ms.
    public var initialReconnectDelay: TimeAmount
    /// The longest wait between reconnection attempts. Default 2 seconds.
    public var maximumReconnectDelay: TimeAmount
    /// The largest bulk string accepted in a reply; a larger one fails with
    /// `.replyTooLarge` and closes the connection. Default 512 MiB, Redis's own
    /// `proto-max-bulk-len` default.
    public var maximumReplyBulkLength: Int
    /// Whether a new connection asks for RESP3 with `HELLO 3` (which then also
    /// carries the `AUTH`), falling back to RESP2 when the server answers that
    /// it knows no `HELLO` or no protocol 3 (Redis before 6). Replies read the
    /// same either way. Default `true`.
    public var usesRESP3: Bool

    /// Creates a configuration with the defaults above.
    ///
    /// - Parameters:
    ///   - host: The server's host name or address. Default `127.0.0.1`.
    ///   - port: The server's TCP port. Default 6379.
    public init(host: String = "127.0.0.1", port: Int = 6379) {
        self.host = host
        self.port = port
        self.username = nil
        self.password = nil
        self.database = 0
        self.tls = nil
        self.tlsServerName = nil
        self.connectTimeout = .seconds(1)
        self.commandTimeout = .seconds(1)
        self.poolSize = 4
        self.initialReconnectDelay = .milliseconds(50)
        self.maximumReconnectDelay = .seconds(2)
        self.maximumReplyBulkLength = 512 * 1024 * 1024
        self.usesRESP3 = true
    }

    /// The same configuration pointed at another server (used by the cluster client for each node).
    func with(host: String, port: Int) -> RedisConfiguration {
        var copy = self
        copy.host = host
        copy.port = port
        return copy
    }
}
#endif  // Redis
