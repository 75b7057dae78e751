import Dispatch
import Foundation
import Testing
@testable import Stash

/// The consistency check that a disk cache runs in the background after opening:
/// it runs on a storage instance of its own, without the cache's lock.
@Suite(.timeLimit(.minutes(5))) struct DiskCacheBackgroundCheckTests {
    /// Pauses the background check after it has listed `data/` (the hook), then
    /// shows that a write and a read on the cache complete while it is paused: the
    /// check does not hold the cache's lock. Then lets it finish and checks that it
    /// still repaired the cache and that the cache's totals saw the repair.
    @Test func readsAndWritesProceedWhileTheCheckRuns() throws {
        try withTemporaryDirectory { directory in
            let log = LogRecorder()
            let cache = try makeDiskCache(directory, codec: .data, storage: .file, logger: log.logger)
            for index in 0..<5 {
                try cache.setValue(testBytes(100, seed: UInt8(index)), forKey: "k\(index)")
            }
            cache.waitForBackgroundWork()  // the check that followed opening is over
            // Damage for the next check to repair: one entry's file disappears.
            let lost = try #require(try cache.core.withStorage { storage throws(StashError) in
                try storage.perform("reading a file name") { connection throws(SQLiteError) in
                    try connection.storedFilename(of: "k0")
                }
            })
            try FileManager.default.removeItem(atPath: "\(directory.path)/data/\(lost)")
            #expect(try cache.count == 5)

            let paused = DispatchSemaphore(value: 0)
            let resume = DispatchSemaphore(value: 0)
            cache.core.setConsistencyCheckAfterListing {
                paused.signal()
                _ = resume.wait(timeout: .now() + 120)
            }
            cache.core.scheduleConsistencyCheck()
            #expect(paused.wait(timeout: .now() + 60) == .success, "the check never reached its pause")

            // The check is paused mid-way. A write and a read, on another thread so that
            // a lock held by the check would fail the test instead of hanging it.
            let done = DispatchSemaphore(value: 0)
            let failures = LockedList()
            Thread.detachNewThread {
                do {
                    try cache.setValue(testBytes(200, seed: 9), forKey: "during")
                    if try cache.value(forKey: "during") != testBytes(200, seed: 9) { failures.append("during read back wrong") }
                    if try cache.value(forKey: "k1") != testBytes(100, seed: 1) { failures.append("k1 read back wrong") }
                } catch {
                    failures.append("\(error)")
                }
                done.signal()
            }
            let completed = done.wait(timeout: .now() + 60) == .success
            resume.signal()
            #expect(completed, "a write and a read waited for the paused consistency check")
            if !completed { _ = done.wait(timeout: .now() + 60) }
            #expect(failures.items.isEmpty, "\(failures.items)")

            cache.waitForBackgroundWork()
            // The check removed the entry whose file was lost, and the cache sees it.
            #expect(log.contains(level: .notice, "repaired"), "\(log.messages(at: .notice))")
            #expect(try cache.count == 5)  // 5 - the lost entry + "during"
            #expect(try cache.value(forKey: "k0") == nil)
            #expect(try cache.value(forKey: "during") == testBytes(200, seed: 9))
            #expect(log.messages(at: .error).isEmpty, "\(log.messages(at: .error))")
            cache.close()
            try expectConsistentDirectory(directory.path, allowOrphans: false)
        }
    }

    /// A check scheduled after `close()` does nothing: it opens no storage, so it
    /// neither recreates the directory nor logs a failure.
    @Test func aCheckAfterCloseDoesNothing() throws {
        try withTemporaryDirectory { directory in
            let log = LogRecorder()
            let cache = try makeDiskCache(directory, codec: .data, logger: log.logger)
            try cache.setValue(testBytes(10), forKey: "k")
            cache.close()
            try FileManager.default.removeItem(atPath: directory.path)
            cache.core.scheduleConsistencyCheck()
            cache.waitForBackgroundWork()
            #expect(!FileManager.default.fileExists(atPath: directory.path))
            #expect(log.messages(at: .error).isEmpty, "\(log.messages(at: .error))")
        }
    }
}

