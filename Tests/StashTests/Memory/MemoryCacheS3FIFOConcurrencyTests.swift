import Dispatch
import Testing
@testable import Stash

/// `.s3FIFO` under contention. Runs under the thread sanitizer in CI (`.ci/run`
/// filters on "Concurrency").
@Suite(.timeLimit(.minutes(5))) struct MemoryCacheS3FIFOConcurrencyTests {
    @Test func eightThreadsKeepEveryInvariant() {
        // The shared stress scenario: reads, writes with costs and TTLs, removals,
        // trims and the background sweep from eight threads.
        MemoryCacheConcurrencyTests().eightThreadsKeepEveryInvariant(policy: .s3FIFO)
    }

    @Test func readersAndWritersLeaveConsistentQueues() {
        let cache = MemoryCache<Int, Int>(configuration: .init(
            countLimit: 256, costLimit: 2_000, policy: .s3FIFO, autoTrimInterval: nil))
        let events = EvictionRecorder<Int, Int>()
        cache.onEvict = events.callback
        let setsPerThread = 10_000
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            var rng = SeededGenerator(seed: UInt64(thread) &+ 7)
            for index in 0..<setsPerThread {
                let key = Int.random(in: 0..<1_024, using: &rng)
                if cache.value(forKey: key) == nil {
                    cache.setValue(thread * setsPerThread + index, forKey: key, cost: Int.random(in: 0...16, using: &rng))
                }
                if index % 500 == 0 { _ = cache.removeValue(forKey: key) }
            }
        }
        let queue = cache.core.table.queue as! AdaptiveFIFOQueue
        #expect(cache.core.lock.withLock { queue.invariantsHold() })
        #expect(cache.count <= 256 && cache.totalCost <= 2_000)
        #expect(cache.core.lock.withLock { queue.smallCount + queue.mainCount } == cache.count)
        let stayed = cache.snapshot().map(\.value)
        #expect(Set(stayed).count == stayed.count)
    }
}
