import StashTestSupport
import Dispatch
import Foundation
import Testing
@testable import Stash

/// Reads on connections of their own (issue #26): they run while the cache's lock
/// is held, see every write and removal that returned before them, from any
/// thread, and never use a connection or a `data/` the cache has left. Threads
/// of their own; every wait is bounded. Run under the thread sanitizer in CI.
@Suite(.timeLimit(.minutes(5))) struct DiskCacheReadConcurrencyTests {
    private static let bound: DispatchTimeInterval = .seconds(60)

    @Test func aReadDoesNotWaitForTheCachesLock() throws {
        try withTemporaryDirectory { directory in
            let cache = try DiskCache<Data>(directory: directory.appending("cache"))
            try cache.setValue(Data("inline".utf8), forKey: "small")
            try cache.setValue(Data(repeating: 7, count: 40_000), forKey: "large")  // a file value
            let holding = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
            let holder = DispatchGroup()
            holder.enter()
            Thread {
                // What a commit does: hold the lock for as long as it takes.
                try? cache.core.withStorage { _ in
                    holding.signal()
                    _ = release.wait(timeout: .now() + Self.bound)
                }
                holder.leave()
            }.start()
            #expect(holding.wait(timeout: .now() + Self.bound) == .success)
            let read = DispatchGroup()
            read.enter()
            let values = LockedValue<[Data?]>([])
            Thread {
                let small = try? cache.value(forKey: "small"), large = try? cache.value(forKey: "large")
                values.withLock { $0 = [small, large] }
                read.leave()
            }.start()
            // The reads finish while the lock is still held.
            let finished = read.wait(timeout: .now() + Self.bound)
            release.signal()
            #expect(finished == .success)
            #expect(holder.wait(timeout: .now() + Self.bound) == .success)
            #expect(values.withLock { $0 } == [Data("inline".utf8), Data(repeating: 7, count: 40_000)])
            #expect(cache.statistics.hits == 2)
            cache.close()
        }
    }

    /// The async read of an inline value runs on the caller's thread: it returns
    /// while the cache's queue is busy; a file value goes through the queue.
    @Test func anAsyncReadOfAnInlineValueDoesNotWaitForTheCachesQueue() async throws {
        try await withTemporaryDirectory { directory in
            let cache = try DiskCache<Data>(directory: directory.appending("cache"))
            try await cache.setValue(Data("inline".utf8), forKey: "small")
            try await cache.setValue(Data(repeating: 7, count: 40_000), forKey: "large")  // a file value
            let busy = TestGate(), release = DispatchSemaphore(value: 0)
            // What a long removeAll() does: hold the queue for as long as it takes.
            let holder = Task {
                try await cache.core.run {
                    busy.open()
                    return release.wait(timeout: .now() + Self.bound)  // on the queue's thread, not the pool's
                }
            }
            try await busy.wait()
            let small = try await cache.value(forKey: "small")
            let missing = try await cache.value(forKey: "missing")
            release.signal()
            // Released, not timed out: the reads above returned while the queue was held.
            #expect(try await holder.value == .success)
            #expect(small == Data("inline".utf8))
            #expect(missing == nil)
            #expect(try await cache.value(forKey: "large") == Data(repeating: 7, count: 40_000))
            let statistics = cache.statistics
            #expect(statistics.hits == 2 && statistics.misses == 1)
            await cache.close()
        }
    }

    /// A value that fails to decode, read asynchronously, is removed, logged and
    /// counted once as a miss, as the synchronous read does.
    @Test func anAsyncReadOfAValueThatFailsToDecodeIsAMissRemovedAndLogged() async throws {
        try await withTemporaryDirectory { directory in
            let raw = try makeDiskCache(directory, codec: .data)
            try await raw.setValue(Data([0xFF, 0xFE]), forKey: "bad")
            await raw.close()
            let log = LogRecorder()
            let strings = try makeDiskCache(directory, codec: .string, logger: log.logger)
            #expect(try await strings.value(forKey: "bad") == nil)
            #expect(try await !strings.contains("bad"))
            #expect(log.contains(level: .error, "could not decode"))
            let statistics = strings.statistics
            #expect(statistics.hits == 0 && statistics.misses == 1)
        }
    }

    @Test func everyThreadReadsWhatItWroteAndNothingAfterItsRemoval() async throws {
        try await withTemporaryDirectory { directory in
            let cache = try DiskCache<Data>(
                directory: directory.appending("cache"), configuration: .init(storage: .mixed(inlineThreshold: 512)))
            let failures = LockedValue<[String]>([])
            await onThreads(4) { thread in
                var rng = SeededGenerator(seed: 0xEAD0 &+ UInt64(thread))
                for step in 0..<300 {
                    let key = "t\(thread)-\(Int.random(in: 0..<20, using: &rng))"
                    // Inline and file values alike.
                    let value = Data(repeating: UInt8(truncatingIfNeeded: step), count: Bool.random(using: &rng) ? 100 : 2_000)
                    do {
                        try cache.setValue(value, forKey: key)
                        let read = try cache.value(forKey: key)
                        if read != value { failures.withLock { $0.append("\(key) read \(read?.count ?? -1) bytes after a write") } }
                        if step % 5 == 0 {
                            try cache.removeValue(forKey: key)
                            if try cache.value(forKey: key) != nil {
                                failures.withLock { $0.append("\(key) read after its removal") }
                            }
                        }
                    } catch {
                        failures.withLock { $0.append("\(key): \(error)") }
                    }
                }
            }
            #expect(failures.withLock { $0 } == [])
            #expect(cache.core.readerCount <= cache.core.readerCapacity)
            await cache.close()
        }
    }

    @Test func readsFollowTheCacheAcrossRemoveAllAndClose() throws {
        try withTemporaryDirectory { directory in
            let cache = try DiskCache<Data>(directory: directory.appending("cache"), configuration: .init(storage: .file))
            try cache.setValue(Data("one".utf8), forKey: "k")
            #expect(try cache.value(forKey: "k") == Data("one".utf8))
            #expect(cache.core.readerCount == 1)
            // removeAll moves data/ to the trash: a reader's descriptor of the old
            // one must not serve the new value's file, nor hide it.
            try cache.removeAll()
            #expect(try cache.value(forKey: "k") == nil)
            try cache.setValue(Data("two".utf8), forKey: "k")
            #expect(try cache.value(forKey: "k") == Data("two".utf8))
            #expect(try cache.value(forKey: "k") == Data("two".utf8))
            cache.close()
            #expect(cache.core.readerCount == 0)
            #expect(throws: StashError.self) { try cache.value(forKey: "k") }
        }
    }
}
