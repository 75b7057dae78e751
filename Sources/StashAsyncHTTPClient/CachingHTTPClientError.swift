#if AsyncHTTPClient
/// An error from ``CachingHTTPClient`` or the origin behind it: a code, a message and the cause.
///
/// A miss is never an error: a request that the cache cannot answer goes to the origin, and an
/// `only-if-cached` miss is a `504` response. This error means the origin could not be reached,
/// timed out, or sent something that is not HTTP; or the request could not be sent at all.
public struct CachingHTTPClientError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as a value to switch on. New codes may be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable {
            case originUnreachable, originTimedOut, invalidRequest, invalidResponse
        }

        private let value: Value

        /// The origin could not be reached, refused the connection or closed it early.
        public static let originUnreachable = Code(value: .originUnreachable)
        /// The origin did not answer within the timeout.
        public static let originTimedOut = Code(value: .originTimedOut)
        /// The request cannot be sent: its URL, method or a header is not valid HTTP.
        public static let invalidRequest = Code(value: .invalidRequest)
        /// The origin's response is not valid HTTP (for example a body shorter than its `Content-Length`).
        public static let invalidResponse = Code(value: .invalidResponse)

        /// The code's name, such as `originTimedOut`.
        public var description: String {
            switch value {
            case .originUnreachable: "originUnreachable"
            case .originTimedOut: "originTimedOut"
            case .invalidRequest: "invalidRequest"
            case .invalidResponse: "invalidResponse"
            }
        }
    }

    /// What went wrong.
    public let code: Code
    /// A sentence for people: what was attempted, and on which URL.
    public let message: String
    /// The underlying error (usually AsyncHTTPClient's `HTTPClientError` or a NIO error), if any.
    public let cause: (any Error & Sendable)?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: What went wrong.
    ///   - message: A sentence for people.
    ///   - cause: The underlying error; `nil` by default.
    public init(code: Code, message: String, cause: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    /// The code, the message and the cause on one line.
    public var description: String {
        if let cause {
            return "\(code): \(message) (\(cause))"
        }
        return "\(code): \(message)"
    }
}
#endif  // AsyncHTTPClient
