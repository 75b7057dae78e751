import Dispatch
import Testing
@testable import Stash

/// Runs under the thread sanitizer in CI (`.ci/run` filters on "Concurrency").
@Suite(.timeLimit(.minutes(5))) struct MemoryCacheConcurrencyTests {
    @Test(arguments: [EvictionPolicy.lru, .fifo, .lfu])
    func eightThreadsKeepEveryInvariant(policy: EvictionPolicy) {
        let threads = 8
        let operations = 20_000
        let clock = ManualClock()
        let cache = MemoryCache<Int, Int>(configuration: .init(
            countLimit: 500, costLimit: 4_000, policy: policy,
            autoTrimInterval: .milliseconds(1), releasesValuesInBackground: true, clock: clock))
        let events = EvictionRecorder<Int, Int>()
        cache.onEvict = events.callback
        let violations = EvictionRecorder<Int, Int>()

        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var rng = SeededGenerator(seed: UInt64(thread) &+ 100)
            for step in 0..<operations {
                let key = Int.random(in: 0..<2_000, using: &rng)
                switch Int.random(in: 0..<100, using: &rng) {
                case 0..<50:
                    // Values encode their key, so a read can check it got the right one.
                    if let value = cache.value(forKey: key), value / 1_000 != key {
                        violations.callback(key, value, .removed)
                    }
                case 50..<85:
                    cache.setValue(key * 1_000 + thread, forKey: key, cost: Int.random(in: 0...20, using: &rng),
                                   ttl: step % 10 == 0 ? .milliseconds(1) : nil)
                    if thread == 0 && step % 100 == 0 { clock.advance(by: .microseconds(500)) }
                case 85..<95:
                    if let value = cache.removeValue(forKey: key), value / 1_000 != key {
                        violations.callback(key, value, .removed)
                    }
                case 95..<98:
                    _ = cache.contains(key)
                    if cache.count > 500 || cache.totalCost > 4_000 {
                        violations.callback(key, cache.count, .countLimit)
                    }
                default:
                    if step % 4_000 == 0 { cache.trim(toCount: 100) } else { cache.removeExpired() }
                }
            }
        }
        cache.autoTrimInterval = nil
        cache._checkInvariants()

        #expect(violations.all.isEmpty)
        let entries = cache.snapshot()
        #expect(cache.count <= 500)
        #expect(cache.totalCost <= 4_000)
        cache.removeExpired()
        #expect(cache.totalCost == cache.snapshot().reduce(0) { $0 + $1.cost })
        #expect(cache.count == cache.snapshot().count)
        #expect(entries.allSatisfy { $0.value / 1_000 == $0.key })
        #expect(events.all.allSatisfy { $0.value / 1_000 == $0.key })
    }

    @Test func everyStoredValueLeavesThroughExactlyOneCallbackOrStays() {
        let cache = MemoryCache<Int, Int>(configuration: .init(countLimit: 64, costLimit: 300, autoTrimInterval: nil))
        let events = EvictionRecorder<Int, Int>()
        cache.onEvict = events.callback
        let setsPerThread = 10_000
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            var rng = SeededGenerator(seed: UInt64(thread))
            for i in 0..<setsPerThread {
                cache.setValue(thread * setsPerThread + i, forKey: Int.random(in: 0..<256, using: &rng),
                               cost: Int.random(in: 0...10, using: &rng))
            }
        }
        // No explicit removals: each value either was replaced, was evicted, or is still stored.
        let left = events.all.map(\.value)
        let stayed = cache.snapshot().map(\.value)
        #expect(left.count + stayed.count == 8 * setsPerThread)
        #expect(Set(left + stayed).count == 8 * setsPerThread, "no value reported twice or lost")
    }
}
