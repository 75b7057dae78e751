import Foundation

extension CachingURLSession {
    /// The body of a ``CachingURLSession/bytes(for:delegate:)`` response, byte by byte, as
    /// `URLSession.AsyncBytes` gives it: adopting the session leaves a
    /// `for try await byte in bytes` loop unchanged.
    ///
    /// It is a type of its own because `URLSession.AsyncBytes` cannot be created outside
    /// Foundation. On Apple platforms, Foundation's `lines`, `characters` and `unicodeScalars`
    /// apply to it as to any `AsyncSequence` of bytes; FoundationNetworking on Linux has neither
    /// those nor `bytes(for:)`. It has no `task` property, as `URLSession.AsyncBytes` has: a
    /// response served from the store has no task.
    ///
    /// The bytes are held in memory (the cache reads a body whole), so iterating never waits for
    /// the network and never throws; iterate it any number of times. A `Sendable` value.
    public struct AsyncBytes: AsyncSequence, Sendable {
        /// A byte of the body.
        public typealias Element = UInt8

        /// The whole body.
        public let data: Data

        /// A body of `data`.
        ///
        /// - Parameter data: The bytes, in order.
        public init(_ data: Data) {
            self.data = data
        }

        /// Gives the bytes in order, then `nil`.
        public struct AsyncIterator: AsyncIteratorProtocol {
            private let data: Data
            private var index: Data.Index

            init(_ data: Data) {
                self.data = data
                index = data.startIndex
            }

            /// The next byte, or `nil` after the last one. Declared `throws` as
            /// `URLSession.AsyncBytes.AsyncIterator.next()` is, so that `for try await` loops
            /// written for it compile unchanged; it never throws.
            ///
            /// - Complexity: O(1); does not suspend.
            public mutating func next() async throws -> UInt8? {
                guard index < data.endIndex else { return nil }
                defer { index = data.index(after: index) }
                return data[index]
            }
        }

        /// An iterator from the first byte.
        ///
        /// - Complexity: O(1).
        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(data)
        }
    }
}
