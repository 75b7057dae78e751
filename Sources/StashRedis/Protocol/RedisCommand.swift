#if Redis
import NIOCore

/// One Redis command: its name, its arguments, and the key that routes it in a cluster.
///
/// ```swift
/// let set = RedisCommand("SET", key: "user:1", ["user:1", .bytes(payload), "PX", .integer(30_000)])
/// ```
///
/// The name and every argument are sent as bulk strings, so arguments may hold
/// any bytes. A command is encoded on the connection's event loop.
///
/// Thread-safety: a value type, `Sendable`.
package struct RedisCommand: Sendable {
    /// One argument of a command.
    package enum Argument: Sendable, ExpressibleByStringLiteral {
        /// UTF-8 text.
        case string(String)
        /// Raw bytes.
        case bytes(ByteBuffer)
        /// An integer, sent in decimal.
        case integer(Int64)

        /// Creates a text argument from a literal.
        ///
        /// - Parameter value: The text.
        package init(stringLiteral value: String) {
            self = .string(value)
        }
    }

    /// The command's name, such as `GET`.
    package var name: String
    /// The arguments after the name.
    package var arguments: [Argument]
    /// The key whose hash slot decides the node in a cluster; `nil` for a keyless
    /// command, which any node may answer.
    package var routingKey: String?

    /// Creates a command.
    ///
    /// - Parameters:
    ///   - name: The command's name, such as `GET`.
    ///   - key: The key that routes the command in a cluster. Default `nil`.
    ///   - arguments: The arguments after the name (the key included, where the
    ///     command takes one). Default none.
    package init(_ name: String, key: String? = nil, _ arguments: [Argument] = []) {
        self.name = name
        self.routingKey = key
        self.arguments = arguments
    }
}
#endif  // Redis
