import Stash

/// An HTTP body as ``HTTPCache`` takes and gives it: a sequence of byte chunks.
///
/// Not called `HTTPBody`, which OpenAPIRuntime's body type is called: a server or client that
/// imports both modules names each without qualification.
///
/// Either bytes held in memory (a stored response, a small request body) or a
/// stream (an origin's response), so that large bodies pass through the cache
/// without being buffered whole.
///
/// ```swift
/// let body = HTTPCacheBody(bytes: Array("hello".utf8))
/// let bytes = try await body.collect(upTo: 1 << 20)
/// ```
///
/// A value type and `Sendable`; iterate a streaming body once only (a second
/// iteration of the same stream sees what the first left). Bytes held in memory
/// can be iterated any number of times.
public struct HTTPCacheBody: AsyncSequence, Sendable {
    /// A chunk of bytes.
    public typealias Element = ArraySlice<UInt8>

    enum Storage: Sendable {
        case bytes([UInt8])
        case stream(@Sendable () -> ChunkSource)
    }

    let storage: Storage

    /// A body of `bytes`, held in memory. The whole body is one chunk.
    ///
    /// - Parameter bytes: The body's bytes.
    public init(bytes: [UInt8]) {
        storage = .bytes(bytes)
    }

    /// An empty body.
    public init() {
        storage = .bytes([])
    }

    /// A body streamed from `sequence`, such as an `AsyncThrowingStream` fed by a connection.
    ///
    /// - Parameter sequence: The chunks, read once, in order. An error it throws ends the
    ///   body with that error (and the cache stores nothing).
    public init<Source: AsyncSequence & Sendable>(_ sequence: Source) where Source.Element == ArraySlice<UInt8> {
        storage = .stream { ChunkSource(sequence) }
    }

    /// A single-pass body over a source already under way.
    init(source: ChunkSource) {
        storage = .stream { source }
    }

    /// The bytes when they are held in memory, `nil` for a stream.
    ///
    /// - Complexity: O(1).
    public var bufferedBytes: [UInt8]? {
        if case .bytes(let bytes) = storage { return bytes }
        return nil
    }

    /// Reads the whole body.
    ///
    /// - Parameter limit: The most bytes to accept.
    /// - Returns: The body's bytes.
    /// - Throws: `StashError` with `StashError.Code.valueTooLarge` when the body is longer
    ///   than `limit`, or the stream's own error.
    /// - Complexity: O(n) in the body's length. Suspends while the stream waits for data.
    public func collect(upTo limit: Int) async throws -> [UInt8] {
        if case .bytes(let bytes) = storage {
            guard bytes.count <= limit else { throw Self.tooLarge(limit) }
            return bytes
        }
        var result: [UInt8] = []
        for try await chunk in self {
            guard result.count + chunk.count <= limit else { throw Self.tooLarge(limit) }
            result.append(contentsOf: chunk)
        }
        return result
    }

    static func tooLarge(_ limit: Int) -> StashError {
        StashError(.valueTooLarge, "the body is longer than the limit of \(limit) bytes")
    }

    /// Creates the iterator over the chunks.
    public func makeAsyncIterator() -> AsyncIterator {
        switch storage {
        case .bytes(let bytes): AsyncIterator(pending: bytes.isEmpty ? nil : bytes[...], source: nil)
        case .stream(let make): AsyncIterator(pending: nil, source: make())
        }
    }

    /// Reads a body's chunks in order.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var pending: ArraySlice<UInt8>?
        let source: ChunkSource?

        /// The next chunk, or `nil` at the end.
        ///
        /// - Throws: The stream's error.
        public mutating func next() async throws -> ArraySlice<UInt8>? {
            if let chunk = pending {
                pending = nil
                return chunk
            }
            guard let source else { return nil }
            return try await source.next()
        }
    }
}

/// Type erasure for a body's underlying sequence: one iterator, used by one reader.
final class ChunkSource: @unchecked Sendable {
    // @unchecked Sendable: a source is created by `makeAsyncIterator()` and used only
    // through that iterator, which is not shared between tasks (iterators are not Sendable).
    private let nextChunk: () async throws -> ArraySlice<UInt8>?

    init<Source: AsyncSequence>(_ sequence: Source) where Source.Element == ArraySlice<UInt8> {
        let box = IteratorBox(sequence.makeAsyncIterator())
        nextChunk = { try await box.next() }
    }

    /// `prefix`, then the rest of an iterator already under way.
    init(prefix: ArraySlice<UInt8>, rest: HTTPCacheBody.AsyncIterator) {
        let box = IteratorBox(rest)
        let pending = PendingChunk(prefix)
        nextChunk = {
            if let chunk = pending.take() { return chunk }
            return try await box.next()
        }
    }

    func next() async throws -> ArraySlice<UInt8>? { try await nextChunk() }
}

/// Holds a mutable iterator behind a reference.
private final class IteratorBox<Base: AsyncIteratorProtocol>: @unchecked Sendable where Base.Element == ArraySlice<UInt8> {
    // @unchecked Sendable: owned by one ChunkSource, which one reader uses at a time.
    var base: Base
    init(_ base: Base) { self.base = base }
    func next() async throws -> ArraySlice<UInt8>? { try await base.next() }
}

/// A chunk handed out once.
private final class PendingChunk: @unchecked Sendable {
    // @unchecked Sendable: used by one ChunkSource, which one reader uses at a time.
    private var chunk: ArraySlice<UInt8>?
    init(_ chunk: ArraySlice<UInt8>) { self.chunk = chunk.isEmpty ? nil : chunk }
    func take() -> ArraySlice<UInt8>? {
        defer { chunk = nil }
        return chunk
    }
}
