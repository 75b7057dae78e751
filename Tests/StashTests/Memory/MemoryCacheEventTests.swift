import Foundation
import Testing
@testable import Stash

@Suite(.timeLimit(.minutes(5))) struct MemoryCacheEventTests {
    @Test func callbackReceivesKeyValueAndReason() {
        let clock = ManualClock()
        let recorder = EvictionRecorder<String, Int>()
        let cache = makeMemoryCache(countLimit: 2, costLimit: 10, clock: clock)
        cache.onEvict = recorder.callback
        cache.setValue(1, forKey: "a")
        cache.setValue(2, forKey: "b")
        cache.setValue(3, forKey: "c")  // countLimit evicts a
        cache.setValue(4, forKey: "c", cost: 8)  // replaced: reports the old value
        cache.removeValue(forKey: "b")  // removed
        cache.setValue(5, forKey: "d", cost: 5)  // costLimit evicts c
        cache.setValue(6, forKey: "e", ttl: .seconds(1))
        clock.advance(by: .seconds(1))
        _ = cache.value(forKey: "e")  // expired
        cache.setValue(7, forKey: "f")
        cache.removeAll()  // d and f, in no particular order
        cache.setValue(8, forKey: "g")
        cache.handleMemoryPressure()
        let events = recorder.all
        #expect(events.map(\.key).prefix(5) == ["a", "c", "b", "c", "e"])
        #expect(Set(events.map(\.key)[5...6]) == ["d", "f"])
        #expect(events.last?.key == "g")
        #expect(events.map(\.value).prefix(5) == [1, 3, 2, 4, 6])
        #expect(events.map(\.reason) == [.countLimit, .replaced, .removed, .costLimit, .expired, .removeAll, .removeAll, .memoryPressure])
        #expect(cache.statistics.evictions == 4)
    }

    @Test func callbackMayReenterTheCacheWithoutDeadlock() {
        let cache = makeMemoryCache(countLimit: 1)
        let reentered = EvictionRecorder<String, Int>()
        cache.onEvict = { [unowned cache] key, value, reason in
            // Every kind of call, from inside the callback.
            _ = cache.value(forKey: key)
            _ = cache.count
            if reason == .countLimit && !key.hasPrefix("re-") {
                cache.setValue(value, forKey: "re-\(key)")
            }
            reentered.callback(key, value, reason)
        }
        cache.setValue(1, forKey: "a")
        cache.setValue(2, forKey: "b")
        #expect(reentered.all.count >= 1)
        #expect(cache.count == 1)
    }

    @Test func evictedValuesAreReleasedOutsideTheLock() {
        final class Tracked: Sendable {
            let onDeinit: @Sendable () -> Void
            init(onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
            deinit { onDeinit() }
        }
        let cache = makeMemoryCache(String.self, Tracked.self, countLimit: 1)
        let released = EvictionRecorder<String, Int>()
        // A deinit that calls into the cache would deadlock (or fail the
        // error-checking mutex in debug builds) if it ran under the lock.
        cache.setValue(Tracked { [unowned cache] in
            released.callback("a", cache.count, .removed)
        }, forKey: "a")
        cache.setValue(Tracked {}, forKey: "b")
        #expect(released.all.count == 1)
        #expect(released.all.first?.value == 1)
    }

    @Test func backgroundReleaseStillReportsEveryEntry() {
        let recorder = EvictionRecorder<Int, Int>()
        let cache = MemoryCache<Int, Int>(configuration: .init(autoTrimInterval: nil, releasesValuesInBackground: true))
        #expect(cache.releasesValuesInBackground)
        cache.onEvict = recorder.callback
        for i in 0..<1_000 { cache.setValue(i, forKey: i) }
        cache.removeAll()
        #expect(recorder.all.count == 1_000)
        #expect(cache.count == 0)
        cache.releasesValuesInBackground = false
        #expect(!cache.releasesValuesInBackground)
    }

    @Test func discardedContentIsAMissAndIsEvicted() {
        final class Blob: DiscardableContent, Sendable {
            private let state = LockedValue((discarded: false, accesses: 0))
            func beginContentAccess() -> Bool { state.withLock { $0.accesses += 1; return !$0.discarded } }
            func endContentAccess() { state.withLock { $0.accesses -= 1 } }
            func discardContentIfPossible() { state.withLock { if $0.accesses == 0 { $0.discarded = true } } }
            var isContentDiscarded: Bool { state.withLock { $0.discarded } }
        }
        let recorder = EvictionRecorder<String, Blob>()
        let cache = makeMemoryCache(String.self, Blob.self, removesAllOnMemoryPressure: false)
        cache.onEvict = recorder.callback
        let kept = Blob(), dropped = Blob()
        cache.setValue(kept, forKey: "kept")
        cache.setValue(dropped, forKey: "dropped")
        #expect(kept.beginContentAccess())
        cache.handleMemoryPressure()  // asks both to discard; only `dropped` can
        #expect(cache.value(forKey: "dropped") == nil)
        #expect(cache.value(forKey: "kept") === kept)
        #expect(recorder.keys(.discarded) == ["dropped"])
        kept.endContentAccess()
    }

    @Test func memoryPressureEmptiesTheCacheOnlyWhenAsked() {
        let cache = makeMemoryCache(removesAllOnMemoryPressure: false)
        cache.setValue(1, forKey: "a")
        cache.handleMemoryPressure()
        #expect(cache.count == 1)
        cache.removesAllOnMemoryPressure = true
        #expect(cache.removesAllOnMemoryPressure)
        cache.handleMemoryPressure()
        #expect(cache.count == 0)
    }

    @Test func enteringBackgroundEmptiesTheCacheWhenAsked() {
        let cache = makeMemoryCache()
        cache.setValue(1, forKey: "a")
        cache.removesAllOnEnteringBackground = false
        cache.core.didEnterBackground()
        #expect(cache.count == 1)
        cache.removesAllOnEnteringBackground = true
        #expect(cache.removesAllOnEnteringBackground)
        cache.core.didEnterBackground()
        #expect(cache.count == 0)
    }
}

@Suite(.timeLimit(.minutes(5))) struct MemoryCachePressureTests {
    @Test func pressureFromTheMonitorEmptiesTheCache() {
        let source = FakeMemoryPressureSource(.psi(0))
        let monitor = MemoryPressureMonitor.forTesting(source)
        let recorder = EvictionRecorder<String, Int>()
        let cache = makeMemoryCache(monitor: monitor)
        cache.onEvict = recorder.callback
        cache.setValue(1, forKey: "a")
        cache.setValue(2, forKey: "b")
        #expect(!monitor.poll(), "no pressure yet")
        #expect(cache.count == 2)
        source.reading = .psi(80)
        #expect(monitor.poll())
        #expect(cache.count == 0)
        #expect(Set(recorder.keys(.memoryPressure)) == ["a", "b"])
        #expect(cache.statistics.evictions == 2)
    }

    @Test func emptyingOnPressureCountsTheEntriesItHeldAfterRemovals() {
        // Given a cache that grew to 1,000 entries, then lost every third one (the index keeps its size).
        let cache = makeMemoryCache(Int.self, Int.self)
        let recorder = EvictionRecorder<Int, Int>()
        for key in 0..<1_000 { cache.setValue(key, forKey: key) }
        for key in stride(from: 0, to: 1_000, by: 3) { cache.removeValue(forKey: key) }
        cache.onEvict = recorder.callback

        // When memory pressure empties it,
        cache.handleMemoryPressure()

        // then the evictions counted under the lock (the count kept, not a scan
        // of the buckets) match the entries reported one by one.
        #expect(cache.count == 0)
        #expect(recorder.keys(.memoryPressure).count == 666)
        #expect(cache.statistics.evictions == 666)
    }

    @Test func appSignalsReachEveryCacheOnTheMonitor() {
        let monitor = MemoryPressureMonitor.forTesting(FakeMemoryPressureSource())
        let first = makeMemoryCache(monitor: monitor)
        let second = makeMemoryCache(monitor: monitor)
        first.setValue(1, forKey: "a")
        second.setValue(1, forKey: "a")
        monitor.notifyMemoryPressure()
        #expect(first.count == 0)
        #expect(second.count == 0)
    }

    @Test func theMonitorDoesNotKeepCachesAlive() {
        let monitor = MemoryPressureMonitor.forTesting(FakeMemoryPressureSource(), startsTimer: true)
        weak var weakCache: MemoryCache<String, Int>?
        do {
            let cache = makeMemoryCache(monitor: monitor)
            weakCache = cache
            #expect(monitor.observerCount == 1)
        }
        #expect(weakCache == nil)
        _ = monitor.poll()
        #expect(monitor.observerCount == 0)
    }
}
