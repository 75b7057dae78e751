import Dispatch
import Foundation
import Testing
@testable import Stash

/// Group commit: writers that arrive while a commit is in flight share the next
/// one, each returns its own outcome, and only after the commit that holds its job.
/// Threads of their own (not the cooperative pool), synchronised by semaphores and
/// the queue's test hook: no test waits for time.
@Suite(.timeLimit(.minutes(5))) struct GroupCommitConcurrencyTests {
    /// Runs `body` on a thread of its own; the returned group is left when it ends.
    /// Waits at most a minute for `group` or `semaphore`: a regression fails the test instead of
    /// hanging CI.
    private func waitBounded(_ group: DispatchGroup, _ what: String) {
        #expect(group.wait(timeout: .now() + 60) == .success, "\(what) did not finish within a minute")
    }

    private func waitBounded(_ semaphore: DispatchSemaphore, _ what: String) {
        #expect(semaphore.wait(timeout: .now() + 60) == .success, "\(what) did not happen within a minute")
    }

    private func onThread(_ body: @escaping @Sendable () -> Void) -> DispatchGroup {
        let group = DispatchGroup()
        group.enter()
        Thread {
            body()
            group.leave()
        }.start()
        return group
    }

    @Test func writersArrivingDuringACommitShareTheNextOneAndGetTheirOwnOutcomes() {
        let queued = DispatchSemaphore(value: 0)
        let queue = GroupCommit<Int, Int>(afterQueuing: { queued.signal() })
        let batches = LockedValue<[[Int]]>([])
        let outcomes = LockedValue<[Int: Int]>([:])
        let leaderCommitting = DispatchSemaphore(value: 0)
        let releaseLeader = DispatchSemaphore(value: 0)
        let commit: @Sendable ([Int]) -> [Int] = { jobs in
            batches.withLock { $0.append(jobs) }
            if jobs == [0] {
                leaderCommitting.signal()
                _ = releaseLeader.wait(timeout: .now() + 60)
            }
            return jobs.map { $0 * 10 }
        }
        let leader = onThread {
            let outcome = queue.submit(0, commit: commit)
            outcomes.withLock { $0[0] = outcome }
        }
        waitBounded(leaderCommitting, "the leader's commit")
        let followers = (1...7).map { job in
            onThread {
                let outcome = queue.submit(job, commit: commit)
                outcomes.withLock { $0[job] = outcome }
            }
        }
        for _ in 1...7 { waitBounded(queued, "a follower's queuing") }
        // Every follower is queued behind the commit in flight, and none has returned.
        #expect(outcomes.withLock { $0.keys.sorted() } == [])
        releaseLeader.signal()
        waitBounded(leader, "the leader")
        for follower in followers { waitBounded(follower, "a follower") }

        let recorded = batches.withLock { $0 }
        #expect(recorded.count == 2)
        #expect(recorded.first == [0])
        #expect(recorded.last?.sorted() == Array(1...7))
        #expect(outcomes.withLock { $0 } == Dictionary(uniqueKeysWithValues: (0...7).map { ($0, $0 * 10) }))
    }

    @Test func aLoneWriterCommitsAtOnce() {
        let queue = GroupCommit<String, Int>()
        var batches: [[String]] = []
        for job in ["a", "bb", "ccc"] {
            let outcome = queue.submit(job) { jobs in
                batches.append(jobs)
                return jobs.map(\.count)
            }
            #expect(outcome == job.count)
        }
        #expect(batches == [["a"], ["bb"], ["ccc"]])
    }

    @Test func concurrentDiskWritesAreAllStoredAndAnOversizedOneFailsAlone() throws {
        let directory = try TemporaryDirectory()
        let cache = try makeDiskCache(directory, codec: .data, sizeLimit: 1_000_000)
        let threads = 8, perThread = 40
        let failures = LockedValue<[String]>([])
        let groups = (0..<threads).map { thread in
            onThread {
                for index in 0..<perThread {
                    let key = "t\(thread)-\(index)"
                    // Every tenth write is over the size limit: it must fail, and only it.
                    let oversized = index % 10 == 3
                    do throws(StashError) {
                        try cache.setValue(oversized ? Data(count: 1_000_001) : Data(key.utf8), forKey: key)
                        if oversized { failures.withLock { $0.append("\(key): an oversized value was stored") } }
                    } catch {
                        if !oversized || error.code != .valueTooLarge {
                            failures.withLock { $0.append("\(key): \(error)") }
                        }
                    }
                }
            }
        }
        for group in groups { waitBounded(group, "a writer thread") }
        #expect(failures.withLock { $0 } == [])
        var stored = 0
        for thread in 0..<threads {
            for index in 0..<perThread {
                let key = "t\(thread)-\(index)"
                let value = try cache.value(forKey: key)
                if index % 10 == 3 {
                    #expect(value == nil)
                } else {
                    #expect(value == Data(key.utf8))
                    stored += 1
                }
            }
        }
        #expect(try cache.count == stored)
        #expect(try cache.verify().isClean)
    }
}
