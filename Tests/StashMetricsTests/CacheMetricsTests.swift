import MetricsTestKit
import Stash
import Testing

@testable import StashMetrics

@Suite(.timeLimit(.minutes(5))) struct CacheMetricsTests {
    struct Unavailable: Error {}

    /// A memory cache with a count limit of 2 and a manual clock, and the
    /// metrics of it on a test backend.
    private func makeCache() -> (MemoryCache<String, Int>, ManualClock, CacheMetrics, TestMetrics) {
        let clock = ManualClock(start: 1_000)
        let cache = MemoryCache<String, Int>(
            configuration: .init(countLimit: 2, policy: .lru, autoTrimInterval: nil, clock: clock))
        let backend = TestMetrics()
        return (cache, clock, CacheMetrics(name: "users", factory: backend), backend)
    }

    private func total(_ backend: TestMetrics, _ label: String, _ dimensions: [(String, String)]) throws -> Int64 {
        try backend.expectCounter(label, [("cache", "users")] + dimensions).totalValue
    }

    @Test func countersCarryWhatChangedSinceTheLastReading() async throws {
        let (cache, _, metrics, backend) = makeCache()
        cache.setValue(1, forKey: "a")
        _ = cache.value(forKey: "a")
        _ = cache.value(forKey: "b")
        await metrics.record(cache.statistics)
        #expect(try total(backend, "stash_cache_requests_total", [("result", "hit")]) == 1)
        #expect(try total(backend, "stash_cache_requests_total", [("result", "miss")]) == 1)

        _ = cache.value(forKey: "a")
        _ = cache.value(forKey: "a")
        cache.setValue(2, forKey: "b")
        cache.setValue(3, forKey: "c")  // evicts one for the count limit
        await metrics.record(cache.statistics)
        await metrics.record(cache.statistics)  // nothing new: adds nothing
        #expect(try total(backend, "stash_cache_requests_total", [("result", "hit")]) == 3)
        #expect(try total(backend, "stash_cache_requests_total", [("result", "miss")]) == 1)
        #expect(try total(backend, "stash_cache_evictions_total", [("reason", "countLimit")]) == 1)
        #expect(try backend.expectCounter("stash_cache_requests_total", [("cache", "users"), ("result", "hit")])
            .values == [1, 2])
    }

    @Test func loadsFailuresRefreshesAndStaleValuesAreCountedAndTimed() async throws {
        let (cache, clock, metrics, backend) = makeCache()
        let options = LoadOptions(ttl: .seconds(10), staleIfError: .seconds(60))
        _ = try await cache.value(forKey: "a", options: options) { _ in 1 }
        clock.advance(by: .seconds(11))
        let stale = try await cache.value(forKey: "a", options: options) { _ in throw Unavailable() }
        #expect(stale == 1)
        await metrics.record(cache.statistics)
        #expect(try total(backend, "stash_cache_loads_total", [("result", "success")]) == 1)
        #expect(try total(backend, "stash_cache_loads_total", [("result", "failure")]) == 1)
        #expect(try total(backend, "stash_cache_stale_served_total", []) == 1)
        let timer = try backend.expectTimer("stash_cache_load_duration_seconds", [("cache", "users")])
        #expect(timer.values.count == 2, "one record per load")
        #expect(timer.values.allSatisfy { $0 == CacheMetrics.midpointNanoseconds(ofBucket: 0) },
                "the manual clock did not move during the loads: both took under 1 µs")
    }

    @Test func aCounterThatWentDownIsTakenAsRestarted() async throws {
        let backend = TestMetrics()
        let metrics = CacheMetrics(name: "users", factory: backend)
        await metrics.record(CacheStatistics(hits: 5))
        await metrics.record(CacheStatistics(hits: 2))
        #expect(try total(backend, "stash_cache_requests_total", [("result", "hit")]) == 7)
    }

    @Test func refreshesHaveTheirOwnCounter() async throws {
        let backend = TestMetrics()
        let metrics = CacheMetrics(name: "users", factory: backend)
        await metrics.record(CacheStatistics(refreshes: 2))
        await metrics.record(CacheStatistics(refreshes: 5))
        #expect(try total(backend, "stash_cache_refreshes_total", []) == 5)
    }

    @Test func fleetReadsHaveTheirOwnCounter() async throws {
        let backend = TestMetrics()
        let metrics = CacheMetrics(name: "users", factory: backend)
        await metrics.record(CacheStatistics(loadSuccesses: 1, fleetReads: 3))
        #expect(try total(backend, "stash_cache_fleet_reads_total", []) == 3)
        #expect(try total(backend, "stash_cache_loads_total", [("result", "success")]) == 1)
    }

    @Test func diskEvictionsAreReportedByReason() async throws {
        let backend = TestMetrics()
        let metrics = CacheMetrics(name: "users", factory: backend)
        await metrics.record(CacheStatistics(evictions: 3, evictionsByReason: [.costLimit: 2, .freeDiskSpace: 1]))
        #expect(try total(backend, "stash_cache_evictions_total", [("reason", "costLimit")]) == 2)
        #expect(try total(backend, "stash_cache_evictions_total", [("reason", "freeDiskSpace")]) == 1)
    }

    @Test func runRecordsALastReadingWhenCancelled() async throws {
        let (cache, _, metrics, backend) = makeCache()
        let reporting = Task { await metrics.run(every: .seconds(3_600)) { cache.statistics } }
        cache.setValue(1, forKey: "a")
        _ = cache.value(forKey: "a")
        reporting.cancel()
        await reporting.value
        #expect(try total(backend, "stash_cache_requests_total", [("result", "hit")]) == 1)
    }

    @Test func bucketMidpointsLieInsideTheirBuckets() {
        #expect(CacheMetrics.midpointNanoseconds(ofBucket: 0) == 500)
        for index in 1..<33 {
            let midpoint = CacheMetrics.midpointNanoseconds(ofBucket: index)
            #expect(midpoint >= 1_000 * (Int64(1) << (index - 1)) && midpoint < 1_000 * (Int64(1) << index))
        }
    }
}
