/// The error thrown by Stash's initialisers and disk writes.
///
/// Every error carries a ``code`` to switch on, a human-readable ``message``,
/// and, when another error caused it, that ``cause`` (for example a
/// ``SQLiteError`` with SQLite's result code, or a POSIX error number).
///
/// A cache miss is never an error: lookups return `nil`.
///
/// ```swift
/// do {
///     try disk.setValue(data, forKey: "")
/// } catch StashError.Code.invalidKey {
///     // a code matches the error that carries it
/// } catch {
///     print(error.message)   // "keys must not be empty"
/// }
/// ```
public struct StashError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    ///
    /// A struct over a private enum, so that new codes can be added without
    /// breaking code that switches on the existing ones.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Wrapped: Hashable, Sendable {
            case invalidArgument
            case invalidKey
            case valueTooLarge
            case directoryUnusable
            case ioFailed
            case databaseFailed
            case corrupted
            case encodingFailed
            case decodingFailed
            case closed
            case recursiveLoad
            case timedOut
            case notLoaded
            case remoteFailed
        }

        let wrapped: Wrapped

        init(_ wrapped: Wrapped) { self.wrapped = wrapped }

        /// An argument is out of its documented range, for example a negative limit.
        public static let invalidArgument = Code(.invalidArgument)
        /// A key is not accepted, for example an empty disk-cache key.
        public static let invalidKey = Code(.invalidKey)
        /// A value is larger than the cache can ever hold.
        public static let valueTooLarge = Code(.valueTooLarge)
        /// The cache directory is missing, is not a directory, or cannot be created or written.
        public static let directoryUnusable = Code(.directoryUnusable)
        /// A file-system operation failed: the cause holds the POSIX error.
        public static let ioFailed = Code(.ioFailed)
        /// SQLite reported an error: the cause is a ``SQLiteError``.
        public static let databaseFailed = Code(.databaseFailed)
        /// Stored data is damaged. The cache sets it aside and keeps working.
        public static let corrupted = Code(.corrupted)
        /// A value could not be encoded by the cache's codec.
        public static let encodingFailed = Code(.encodingFailed)
        /// Stored bytes could not be decoded by the cache's codec.
        public static let decodingFailed = Code(.decodingFailed)
        /// The cache has been closed.
        public static let closed = Code(.closed)
        /// A loader asked the cache for the key it is loading, which would wait
        /// for itself forever.
        public static let recursiveLoad = Code(.recursiveLoad)
        /// A load did not finish within its timeout.
        public static let timedOut = Code(.timedOut)
        /// A bulk loader returned no value for a key that a single-key caller
        /// was waiting for.
        public static let notLoaded = Code(.notLoaded)
        /// The remote tier failed, or cannot do, an operation that cannot go on without it: an
        /// atomic insertion across the fleet (``Cache/insertValue(_:forKey:ttl:)``). The cause
        /// holds the tier's error. (Other operations never fail for the remote tier's sake.)
        public static let remoteFailed = Code(.remoteFailed)

        /// The code's name, such as "invalid key".
        public var description: String {
            switch wrapped {
            case .invalidArgument: "invalid argument"
            case .invalidKey: "invalid key"
            case .valueTooLarge: "value too large"
            case .directoryUnusable: "directory unusable"
            case .ioFailed: "I/O failed"
            case .databaseFailed: "database failed"
            case .corrupted: "corrupted"
            case .encodingFailed: "encoding failed"
            case .decodingFailed: "decoding failed"
            case .closed: "closed"
            case .recursiveLoad: "recursive load"
            case .timedOut: "timed out"
            case .notLoaded: "not loaded"
            case .remoteFailed: "remote tier failed"
            }
        }
    }

    /// What kind of failure this is.
    public var code: Code
    /// A sentence describing what failed, naming the key or path where there is one.
    public var message: String
    /// The error that caused this one, if any: a ``SQLiteError``, a ``SystemCallError``
    /// carrying `errno`, or an error thrown by a codec.
    public var cause: (any Error & Sendable)?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: What kind of failure this is.
    ///   - message: A sentence describing what failed.
    ///   - cause: The underlying error, if any. Defaults to `nil`.
    public init(_ code: Code, _ message: String, cause: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    /// The code, the message and, when there is one, the cause, on one line.
    public var description: String {
        if let cause {
            return "StashError(\(code)): \(message) (cause: \(cause))"
        }
        return "StashError(\(code)): \(message)"
    }
}

extension StashError.Code {
    /// Whether `error` carries this code, so that a `catch` clause or a
    /// `switch` can match a code directly:
    ///
    /// ```swift
    /// do {
    ///     try cache.setValue(value, forKey: key)
    /// } catch StashError.Code.valueTooLarge {
    ///     // skip it
    /// }
    /// ```
    ///
    /// - Complexity: O(1).
    public static func ~= (code: StashError.Code, error: StashError) -> Bool {
        error.code == code
    }

    /// Whether `error` is a ``StashError`` carrying this code. Any other error
    /// does not match.
    ///
    /// - Complexity: O(1).
    public static func ~= (code: StashError.Code, error: any Error) -> Bool {
        (error as? StashError)?.code == code
    }
}
