import CoreMetrics
import Stash

/// Publishes a cache's `CacheStatistics` through swift-metrics, so that
/// a server's Prometheus, StatsD or OpenTelemetry backend sees its hits,
/// misses, evictions and loads.
///
/// ```swift
/// let metrics = CacheMetrics(name: "users")
/// let reporting = Task { await metrics.run(every: .seconds(10)) { users.statistics } }
/// ```
///
/// The caches keep their counters in memory, under the lock each already takes
/// for a lookup (`HTTPCache` and `RedisCacheTier` take a short one of their own
/// per response or read, beside work that costs microseconds); this type reads
/// them with the cache's `statistics` property (on `MemoryCache`, `DiskCache`,
/// `Cache`, StashHTTP's `HTTPCache` or StashRedis' `RedisCacheTier`) and
/// adds what changed since its previous reading to swift-metrics counters. So
/// exporting adds nothing to a cache's hit path: no lock, no allocation, no
/// metrics call per lookup. Counters lag by at most one reporting interval.
///
/// Every metric carries the dimension `cache` with ``name``:
///
/// | metric | kind | other dimensions |
/// |---|---|---|
/// | `stash_cache_requests_total` | counter | `result`: `hit` or `miss` |
/// | `stash_cache_evictions_total` | counter | `reason`: an `EvictionReason`'s description, such as `countLimit` |
/// | `stash_cache_loads_total` | counter | `result`: `success` or `failure` |
/// | `stash_cache_fleet_reads_total` | counter | |
/// | `stash_cache_refreshes_total` | counter | |
/// | `stash_cache_stale_served_total` | counter | |
/// | `stash_cache_load_duration_seconds` | timer | |
///
/// Load durations are kept by the cache as a histogram with one bucket per
/// power of two of microseconds (`LoadTimeDistribution`); each load
/// reported since the previous reading is recorded in the timer as its
/// bucket's midpoint, so a duration is exact to within a factor of 1.5.
///
/// A counter that went down since the previous reading (statistics of a new
/// cache given to the same reporter) is taken as restarted from zero: its
/// whole value is added.
///
/// An actor: readings are serialised, and any task may call ``record(_:)``.
public actor CacheMetrics {
    /// The value of the `cache` dimension of every metric.
    public nonisolated let name: String

    private let hits: Counter
    private let misses: Counter
    private let loadSuccesses: Counter
    private let loadFailures: Counter
    private let fleetReads: Counter
    private let refreshes: Counter
    private let staleValuesServed: Counter
    private let loadDuration: Timer
    private let factory: any MetricsFactory
    private var evictions: [EvictionReason: Counter] = [:]
    private var previous = CacheStatistics()

    /// Creates the metrics of the cache called `name`.
    ///
    /// - Parameters:
    ///   - name: The `cache` dimension of every metric, such as `"users"`.
    ///   - factory: The metrics backend. Defaults to `MetricsSystem.factory`, the
    ///     one bootstrapped by the application.
    /// - Complexity: O(1). Creates the metrics through `factory`; never blocks.
    public init(name: String, factory: any MetricsFactory = MetricsSystem.factory) {
        self.name = name
        self.factory = factory
        let cache = [("cache", name)]
        hits = Counter(label: "stash_cache_requests_total", dimensions: cache + [("result", "hit")], factory: factory)
        misses = Counter(label: "stash_cache_requests_total", dimensions: cache + [("result", "miss")], factory: factory)
        loadSuccesses = Counter(
            label: "stash_cache_loads_total", dimensions: cache + [("result", "success")], factory: factory)
        loadFailures = Counter(
            label: "stash_cache_loads_total", dimensions: cache + [("result", "failure")], factory: factory)
        fleetReads = Counter(label: "stash_cache_fleet_reads_total", dimensions: cache, factory: factory)
        refreshes = Counter(label: "stash_cache_refreshes_total", dimensions: cache, factory: factory)
        staleValuesServed = Counter(label: "stash_cache_stale_served_total", dimensions: cache, factory: factory)
        loadDuration = Timer(label: "stash_cache_load_duration_seconds", dimensions: cache, factory: factory)
    }

    /// Adds what changed in `statistics` since the previous reading to the metrics.
    ///
    /// - Parameter statistics: A cache's `statistics`, read now.
    /// - Complexity: O(r + b + l): r eviction reasons, b = 33 load-time
    ///   buckets, and l loads since the previous reading (each is one timer
    ///   record). Never blocks beyond the backend's own calls.
    public func record(_ statistics: CacheStatistics) {
        Self.add(statistics.hits, was: previous.hits, to: hits)
        Self.add(statistics.misses, was: previous.misses, to: misses)
        Self.add(statistics.loadSuccesses, was: previous.loadSuccesses, to: loadSuccesses)
        Self.add(statistics.loadFailures, was: previous.loadFailures, to: loadFailures)
        Self.add(statistics.fleetReads, was: previous.fleetReads, to: fleetReads)
        Self.add(statistics.refreshes, was: previous.refreshes, to: refreshes)
        Self.add(statistics.staleValuesServed, was: previous.staleValuesServed, to: staleValuesServed)
        for (reason, count) in statistics.evictionsByReason {
            Self.add(count, was: previous.evictionsByReason[reason] ?? 0, to: evictionCounter(for: reason))
        }
        let buckets = statistics.loadTimes.buckets
        let wasBuckets = previous.loadTimes.buckets
        let restarted = statistics.loadTimes.count < previous.loadTimes.count
        for (index, count) in buckets.enumerated() {
            let new = restarted ? count : count - wasBuckets[index]
            guard new > 0 else { continue }
            let midpoint = Self.midpointNanoseconds(ofBucket: index)
            for _ in 0..<new { loadDuration.recordNanoseconds(midpoint) }
        }
        previous = statistics
    }

    /// Reads `statistics` every `interval` and records it, until the calling
    /// task is cancelled; then records a last reading and returns.
    ///
    /// - Parameters:
    ///   - interval: How often to read. Defaults to 10 seconds, a common scrape interval.
    ///   - clock: The clock that times the interval. Defaults to `ContinuousClock()`.
    ///   - statistics: Reads the cache's statistics, such as `{ cache.statistics }`.
    /// - Complexity: One ``record(_:)`` per interval. Suspends between readings;
    ///   never blocks a thread.
    public func run<C: Clock<Duration>>(
        every interval: Duration = .seconds(10), clock: C = ContinuousClock(),
        statistics: @Sendable () -> CacheStatistics
    ) async {
        while !Task.isCancelled {
            record(statistics())
            do {
                try await clock.sleep(for: interval)
            } catch {
                break
            }
        }
        record(statistics())
    }

    private func evictionCounter(for reason: EvictionReason) -> Counter {
        if let counter = evictions[reason] { return counter }
        let counter = Counter(
            label: "stash_cache_evictions_total", dimensions: [("cache", name), ("reason", reason.description)],
            factory: factory)
        evictions[reason] = counter
        return counter
    }

    /// Adds `value - was` to `counter`, or `value` when the counter restarted.
    private static func add(_ value: Int, was: Int, to counter: Counter) {
        let delta = value >= was ? value - was : value
        if delta > 0 { counter.increment(by: delta) }
    }

    /// The middle of a `LoadTimeDistribution` bucket: bucket 0 holds
    /// loads under 1 µs, bucket i > 0 those from 2^(i-1) µs to under 2^i µs.
    static func midpointNanoseconds(ofBucket index: Int) -> Int64 {
        index == 0 ? 500 : 750 * (Int64(1) << index)
    }
}
