#if Redis
/// The error thrown by StashRedis: the client, the cluster client and the tier.
///
/// Every error carries a ``code`` to switch on, a human-readable ``message``,
/// and, when another error caused it, that ``cause`` (a NIO channel error, a TLS
/// error, a codec error). A cache miss is never an error: lookups return `nil`.
///
/// ```swift
/// do {
///     _ = try await client.get("k")
/// } catch RedisError.Code.unavailable {
///     // the circuit breaker is open, or no connection could be made
/// }
/// ```
///
/// Thread-safety: a value type, `Sendable`.
public struct RedisError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    ///
    /// A struct over a private enum, so that new codes can be added without
    /// breaking code that switches on the existing ones.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Wrapped: Hashable, Sendable {
            case protocolViolation
            case replyTooLarge
            case connectionFailed
            case connectionClosed
            case timeout
            case serverError
            case unavailable
            case valueTooLarge
            case invalidArgument
            case unexpectedReply
            case clusterRedirectionLoop
            case lockNotHeld
            case decodingFailed
            case encodingFailed
        }

        let wrapped: Wrapped

        init(_ wrapped: Wrapped) { self.wrapped = wrapped }

        /// The server sent bytes that are not valid RESP (a malformed or truncated reply).
        public static let protocolViolation = Code(.protocolViolation)
        /// A reply announced a bulk string or array larger than the configured maximum.
        public static let replyTooLarge = Code(.replyTooLarge)
        /// A connection to the server could not be made (refused, unreachable, TLS handshake failed).
        public static let connectionFailed = Code(.connectionFailed)
        /// The connection closed while a command was waiting for its reply.
        public static let connectionClosed = Code(.connectionClosed)
        /// A connect or a command did not finish within its timeout.
        public static let timeout = Code(.timeout)
        /// The server answered with an error reply (`-ERR ...`); the message is the server's.
        public static let serverError = Code(.serverError)
        /// Redis is considered down (the circuit breaker is open or reconnection is backing off): the call failed fast.
        public static let unavailable = Code(.unavailable)
        /// A value is larger than the server accepts (`proto-max-bulk-len`) or than the tier's limit.
        public static let valueTooLarge = Code(.valueTooLarge)
        /// A caller passed an invalid argument (an empty key, a negative TTL).
        public static let invalidArgument = Code(.invalidArgument)
        /// The server answered with a reply of a type the command never returns.
        public static let unexpectedReply = Code(.unexpectedReply)
        /// A cluster command was redirected (`MOVED`/`ASK`) more times than allowed.
        public static let clusterRedirectionLoop = Code(.clusterRedirectionLoop)
        /// A distributed lock was released or extended after it had expired or been taken by another holder.
        public static let lockNotHeld = Code(.lockNotHeld)
        /// A stored value could not be decoded by the tier's codec.
        public static let decodingFailed = Code(.decodingFailed)
        /// A value could not be encoded by the tier's codec.
        public static let encodingFailed = Code(.encodingFailed)

        /// The code's name, such as `protocolViolation`.
        public var description: String { "\(wrapped)" }

        /// Whether `error` is a ``RedisError`` with this code, so that a `catch` clause can name a code.
        ///
        /// - Parameters:
        ///   - code: The code to match.
        ///   - error: Any error.
        /// - Returns: `true` when `error` is a ``RedisError`` whose ``RedisError/code`` is `code`.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? RedisError)?.code == code
        }
    }

    /// What kind of failure this is.
    public let code: Code
    /// A human-readable explanation, naming the server, command or limit involved.
    public let message: String
    /// The underlying error, if another error caused this one.
    public let cause: (any Error)?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: What kind of failure this is.
    ///   - message: A human-readable explanation.
    ///   - cause: The underlying error, if any. Default `nil`.
    public init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    /// `code: message`, followed by the cause when there is one.
    public var description: String {
        if let cause { return "\(code): \(message) (cause: \(cause))" }
        return "\(code): \(message)"
    }
}
#endif  // Redis
