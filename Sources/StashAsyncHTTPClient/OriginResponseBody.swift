import AsyncHTTPClient
import NIOCore

/// An origin's response body, still streaming, over which the fetch's timeout keeps running.
///
/// ``OriginFetcher``'s timeout is the time the origin has for the whole response. AsyncHTTPClient's
/// own deadline ends when the response head arrives, so this body takes over: it starts with what is
/// left of the timeout, spends it while a chunk is awaited, and pauses it while a received chunk waits
/// for its reader (a slow reader never times the origin out). When the origin uses it up (it stalls
/// mid-body, or trickles), reading throws ``CachingHTTPClientError`` with code `.originTimedOut`; the
/// chunk under way is cancelled, which makes AsyncHTTPClient close the connection rather than return
/// it to its pool, and the bytes read so far are the reader's to drop. Any other failure of the
/// stream is classified as ``CachingHTTPClientError/init(originFailure:url:)`` does;
/// a `CancellationError` (the reading task was cancelled) passes through unchanged.
///
/// Iterate it once. Thread-safe to pass around (a value of `Sendable` parts); its iterator is used
/// by one task at a time, as any iterator.
package struct OriginResponseBody: AsyncSequence, Sendable {
    /// A chunk of the body, as AsyncHTTPClient read it.
    package typealias Element = ByteBuffer

    private let base: HTTPClientResponse.Body
    private let remaining: TimeAmount
    private let url: String

    /// Wraps `base`, which has `remaining` of the origin's time left.
    ///
    /// - Parameters:
    ///   - base: The body of AsyncHTTPClient's response.
    ///   - remaining: What is left of the timeout; zero or less fails the first read that has to wait.
    ///   - url: The URL, for error messages.
    package init(_ base: HTTPClientResponse.Body, remaining: TimeAmount, url: String) {
        self.base = base
        self.remaining = remaining
        self.url = url
    }

    /// Creates the iterator; call once.
    package func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: BaseIterator(base.makeAsyncIterator()), remaining: remaining, url: url)
    }

    /// Reads the chunks in order, each within what is left of the origin's time.
    package struct AsyncIterator: AsyncIteratorProtocol {
        private let base: BaseIterator
        private var remaining: TimeAmount
        private let url: String

        fileprivate init(base: BaseIterator, remaining: TimeAmount, url: String) {
            self.base = base
            self.remaining = remaining
            self.url = url
        }

        /// The next chunk, or `nil` at the end of the body.
        ///
        /// - Throws: ``CachingHTTPClientError`` (`.originTimedOut` when the origin's time runs out
        ///   first), or `CancellationError` when the reading task is cancelled.
        /// - Complexity: Suspends until the chunk arrives or the time runs out; starts two child
        ///   tasks (the read and its timer).
        package mutating func next() async throws -> ByteBuffer? {
            guard remaining > .zero else { throw timedOut }
            let started = NIODeadline.now()
            // The time spent waiting is the origin's; a timer never ends early, so a timed-out
            // read leaves nothing.
            defer { remaining = remaining - (NIODeadline.now() - started) }
            let base = base
            let limit = Duration.nanoseconds(remaining.nanoseconds)
            do {
                return try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
                    group.addTask { try await base.next() }
                    group.addTask {
                        try await Task.sleep(for: limit)
                        throw TimeUp()
                    }
                    // Whichever ends first decides; the other is cancelled. A cancelled read makes
                    // AsyncHTTPClient drop the request and close its connection.
                    defer { group.cancelAll() }
                    return try await group.next() ?? nil
                }
            } catch is TimeUp {
                throw timedOut
            } catch let error as CancellationError {
                throw error
            } catch {
                throw CachingHTTPClientError(originFailure: error, url: url)
            }
        }

        private var timedOut: CachingHTTPClientError {
            CachingHTTPClientError(
                code: .originTimedOut, message: "the origin did not send the whole body in time: \(url)")
        }
    }

    /// Thrown by the timer of one read when it ends first.
    private struct TimeUp: Error {}

    /// AsyncHTTPClient's iterator behind a reference, so the read's child task can advance it.
    fileprivate final class BaseIterator: @unchecked Sendable {
        // @unchecked Sendable: one `AsyncIterator` owns it, and its `next()` awaits the child task
        // that calls this `next()` before returning, so two reads never overlap.
        private var iterator: HTTPClientResponse.Body.AsyncIterator

        init(_ iterator: HTTPClientResponse.Body.AsyncIterator) {
            self.iterator = iterator
        }

        func next() async throws -> ByteBuffer? {
            try await iterator.next()
        }
    }
}
