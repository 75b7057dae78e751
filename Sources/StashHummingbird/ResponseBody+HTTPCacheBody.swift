#if Hummingbird
import AsyncAlgorithms
import Hummingbird
import StashHTTP

extension HTTPCacheBody {
    /// A route's response body as the cache reads it: the body's writer runs in a task of its
    /// own and hands each buffer over as the cache asks for it (a channel with no buffer, so a
    /// long body never piles up in memory). When the reader stops early (a body too large to
    /// store that the client stopped reading), the writer's task is cancelled.
    init(_ body: ResponseBody) {
        self.init(ResponseBodySequence(body: body))
    }
}

extension ResponseBody {
    /// A body that writes `body`'s chunks in order: what the cache answered.
    init(_ body: HTTPCacheBody, contentLength: Int?) {
        if let bytes = body.bufferedBytes {
            self.init(byteBuffer: ByteBuffer(bytes: bytes))
            return
        }
        self.init(contentLength: contentLength) { writer in
            for try await chunk in body {
                try await writer.write(ByteBuffer(bytes: chunk))
            }
            try await writer.finish(nil)
        }
    }
}

/// The chunks a `ResponseBody` writes, read once.
private struct ResponseBodySequence: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>
    let body: ResponseBody

    func makeAsyncIterator() -> Iterator {
        let channel = AsyncThrowingChannel<ArraySlice<UInt8>, any Error>()
        let body = body
        let writing = Task {
            do {
                try await body.write(ChannelWriter(channel: channel))
            } catch {
                channel.fail(error)
            }
        }
        return Iterator(base: channel.makeAsyncIterator(), writing: WritingTask(task: writing))
    }

    struct Iterator: AsyncIteratorProtocol {
        var base: AsyncThrowingChannel<ArraySlice<UInt8>, any Error>.Iterator
        let writing: WritingTask

        mutating func next() async throws -> ArraySlice<UInt8>? {
            try await base.next()
        }
    }
}

/// The task that runs a body's writer; cancelled when the last reader lets go of it.
private final class WritingTask: Sendable {
    let task: Task<Void, Never>
    init(task: Task<Void, Never>) { self.task = task }
    deinit { task.cancel() }
}

/// A `ResponseBodyWriter` that sends each buffer into a channel and finishes it at the end.
private struct ChannelWriter: ResponseBodyWriter {
    let channel: AsyncThrowingChannel<ArraySlice<UInt8>, any Error>

    mutating func write(_ buffer: ByteBuffer) async throws {
        guard buffer.readableBytes > 0 else { return }
        await channel.send(ArraySlice(buffer.readableBytesView))
        try Task.checkCancellation()
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        channel.finish()
    }
}
#endif  // Hummingbird
