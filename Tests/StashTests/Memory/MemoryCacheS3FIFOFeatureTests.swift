import Foundation
import Testing
@testable import Stash

/// What MemoryCache does under every policy, checked under `.s3FIFO`: age
/// limits, trims in eviction order, `onEvict` reasons, memory pressure and
/// discardable content.
@Suite(.timeLimit(.minutes(5))) struct MemoryCacheS3FIFOFeatureTests {
    @Test func ageLimitAndTimeToLiveExpireEntries() {
        let clock = ManualClock()
        let cache = makeMemoryCache(countLimit: 10, ageLimit: .seconds(10), policy: .s3FIFO, clock: clock)
        let recorder = EvictionRecorder<String, Int>()
        cache.onEvict = recorder.callback
        cache.setValue(1, forKey: "old")
        clock.advance(by: .seconds(6))
        cache.setValue(2, forKey: "young")
        cache.setValue(3, forKey: "short", ttl: .seconds(1))
        clock.advance(by: .seconds(5))
        #expect(cache.value(forKey: "old") == nil)
        #expect(cache.value(forKey: "short") == nil)
        #expect(cache.value(forKey: "young") == 2)
        cache.removeExpired()
        #expect(Set(recorder.keys(.expired)) == ["old", "short"])
        #expect(cache.keys == ["young"])
    }

    @Test func trimsFollowEvictionOrderAndReportTheirReasons() {
        let cache = makeMemoryCache(countLimit: 100, policy: .s3FIFO)
        let recorder = EvictionRecorder<String, Int>()
        cache.onEvict = recorder.callback
        for index in 0..<5 { cache.setValue(index, forKey: "k\(index)", cost: index) }
        // Listed: the small queue (budget 1) oldest first, then the main queue oldest first.
        #expect(cache.keys == ["k4", "k0", "k1", "k2", "k3"])
        // Trims take the victims an eviction would: the small queue is within its
        // budget, so the main queue's oldest entries with counter 0 go.
        cache.trim(toCount: 3)
        #expect(recorder.keys(.countLimit) == ["k0", "k1"])
        cache.trim(toCost: 4)
        #expect(recorder.keys(.costLimit) == ["k2", "k3"])
        #expect(cache.keys == ["k4"])
        cache.setValue(40, forKey: "k4")
        #expect(recorder.keys(.replaced) == ["k4"])
        #expect(cache.removeValue(forKey: "k4") == 40)
        #expect(recorder.keys(.removed) == ["k4"])
        #expect(cache.snapshot().isEmpty)
    }

    @Test func memoryPressureEmptiesTheCache() {
        let source = FakeMemoryPressureSource(.psi(0))
        let monitor = MemoryPressureMonitor.forTesting(source)
        let cache = makeMemoryCache(countLimit: 4, policy: .s3FIFO, monitor: monitor)
        let recorder = EvictionRecorder<String, Int>()
        cache.onEvict = recorder.callback
        for index in 0..<6 { cache.setValue(index, forKey: "k\(index)") }
        source.reading = .psi(80)
        #expect(monitor.poll())
        #expect(cache.count == 0)
        #expect(recorder.keys(.memoryPressure).count == 4)
        for index in 0..<6 { cache.setValue(index, forKey: "k\(index)") }
        #expect(cache.count == 4)
    }

    @Test func discardedContentIsAMissAndIsEvicted() {
        final class Blob: DiscardableContent, @unchecked Sendable {
            // @unchecked Sendable: the flag is only touched with the lock held.
            private let lock = NSLock()
            private var discarded = false
            func beginContentAccess() -> Bool { lock.withLock { !discarded } }
            func endContentAccess() {}
            func discardContentIfPossible() { lock.withLock { discarded = true } }
            var isContentDiscarded: Bool { lock.withLock { discarded } }
        }
        let recorder = EvictionRecorder<String, Blob>()
        let cache = makeMemoryCache(String.self, Blob.self, countLimit: 4, policy: .s3FIFO, removesAllOnMemoryPressure: false)
        cache.onEvict = recorder.callback
        let blob = Blob()
        cache.setValue(blob, forKey: "blob")
        blob.discardContentIfPossible()
        #expect(cache.value(forKey: "blob") == nil)
        #expect(recorder.keys(.discarded) == ["blob"])
        #expect((cache.core.table.queue as! AdaptiveFIFOQueue).invariantsHold())
    }
}
