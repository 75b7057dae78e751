#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import Logging
import Stash

/// The engine behind ``HTTPCache``: applies ``HTTPCacheRules`` to the tiers and the origin.
///
/// This file holds its state, statistics and keys; one file per job holds the rest, along the
/// steps of a request: `+Answering` (from the store, else through the origin, one request per key
/// at a time; serving a stored response), `+Origin` (fetching, validating, storing), `+Tiers`
/// (reading and writing the store) and `+Revalidation` (background revalidations and waiting for
/// them).
///
/// The store is a ``Cache`` of entries: memory, disk when the configuration names a directory,
/// and the configuration's remote tier when there is one, with `Cache`'s rules for keeping them
/// consistent (and its one policy for disk failures).
///
/// Thread-safety: the state that changes after init is behind one lock (`state`); the rest is
/// immutable or thread-safe (the store, `background`, `outcomes`).
final class HTTPCacheEngine: Sendable {
    let configuration: HTTPCache.Configuration
    let rules: HTTPCacheRules
    /// Memory, disk and remote tiers, as the configuration asks.
    let store: Cache<HTTPCacheEntry>
    /// The store's memory tier, read directly for an answer that must not suspend
    /// (``freshAnswerInMemory(for:)``).
    let memory: MemoryCache<String, HTTPCacheEntry>
    let clock: any CacheClock
    let logger: Logger
    /// What changes after init, behind one lock.
    struct State {
        /// The gate of the origin request under way for each key.
        var inFlight: [String: FetchGate] = [:]
    }
    let state = LockedValue(State())
    /// The background revalidations under way, for shutdown to wait for.
    let background = BackgroundTasks()
    /// How many responses had each outcome (see ``statistics``).
    let outcomes = LockedValue(OutcomeCounts())
    struct OutcomeCounts {
        var hits = 0
        var stale = 0
        var forwarded = 0
    }
    /// The store's failures (the disk tier's: a remote tier's never reach the engine), logged
    /// once per incident, not per call; the first success ends one.
    let storeIncidents: IncidentLog

    init(configuration: HTTPCache.Configuration) throws(StashError) {
        // One policy with the other caches: a value out of range is clamped, with a warning,
        // never refused.
        var configuration = configuration
        let warningLogger = configuration.logger  // not read through `configuration` while a field of it is inout
        func clamp<T: Comparable>(_ name: String, _ value: inout T, atLeast minimum: T, meaning: String) {
            guard value < minimum else { return }
            warningLogger.warning("[Stash] \(name) \(value) is out of range; using \(minimum), \(meaning)")
            value = minimum
        }
        clamp("memoryCostLimit", &configuration.memoryCostLimit, atLeast: 0, meaning: "which stores nothing in memory")
        clamp("memoryCountLimit", &configuration.memoryCountLimit, atLeast: 0, meaning: "which stores nothing in memory")
        clamp("diskSizeLimit", &configuration.diskSizeLimit, atLeast: 0, meaning: "which stores nothing on disk")
        clamp("diskCountLimit", &configuration.diskCountLimit, atLeast: 0, meaning: "which stores nothing on disk")
        clamp("maximumEntrySize", &configuration.maximumEntrySize, atLeast: 0, meaning: "which stores no body")
        clamp("maximumHeaderSize", &configuration.maximumHeaderSize, atLeast: 0, meaning: "which stores no response")
        clamp("maximumVariantsPerURL", &configuration.maximumVariantsPerURL, atLeast: 1, meaning: "one variant per URL")
        if configuration.maximumVariantsPerURL > HTTPCacheEntry.maximumVariants {
            warningLogger.warning(
                "[Stash] maximumVariantsPerURL \(configuration.maximumVariantsPerURL) is out of range; using \(HTTPCacheEntry.maximumVariants), the most a stored record holds")
            configuration.maximumVariantsPerURL = HTTPCacheEntry.maximumVariants
        }
        clamp("heuristicFreshnessLimit", &configuration.heuristicFreshnessLimit, atLeast: .zero,
              meaning: "no heuristic freshness")
        clamp("staleIfUnreachable", &configuration.staleIfUnreachable, atLeast: .zero,
              meaning: "no stale response when the origin is unreachable")
        let cap = configuration.heuristicFreshnessLimit.components.seconds
        self.configuration = configuration
        rules = HTTPCacheRules(
            mode: configuration.mode, heuristicCap: cap,
            staleIfUnreachable: configuration.staleIfUnreachable.components.seconds)
        clock = configuration.clock
        logger = configuration.logger
        storeIncidents = IncidentLog(logger: configuration.logger, clock: configuration.clock)
        memory = MemoryCache(configuration: .init(
            label: "Stash.HTTPCache", countLimit: configuration.memoryCountLimit, costLimit: configuration.memoryCostLimit,
            clock: configuration.clock, logger: configuration.logger))
        let disk = try configuration.directory.map { directory throws(StashError) in
            try DiskCache<HTTPCacheEntry>(
                directory: directory, codec: .httpCacheEntry,
                configuration: .init(
                    countLimit: configuration.diskCountLimit, sizeLimit: configuration.diskSizeLimit,
                    logger: configuration.logger))
        }
        store = try Cache(
            memory: memory, disk: disk, remote: configuration.remote, cost: { entry, _ in entry.cost },
            logger: configuration.logger)
    }

    // MARK: - Statistics

    /// See ``HTTPCache/statistics``.
    var statistics: CacheStatistics {
        let counts = outcomes.withLock { $0 }
        return CacheStatistics(hits: counts.hits + counts.stale, misses: counts.forwarded, staleValuesServed: counts.stale)
            .addingEvictions(of: store.statistics)
    }

    // MARK: - Keys

    /// `METHOD scheme://authority/path?query`, with the scheme and authority lower-cased
    /// and a default port dropped.
    static func key(method: HTTPRequest.Method, scheme: String?, authority: String?, path: String?) -> String {
        let scheme = scheme?.lowercased() ?? "http"
        var authority = authority?.lowercased() ?? ""
        if scheme == "http", authority.hasSuffix(":80") { authority.removeLast(3) }
        if scheme == "https", authority.hasSuffix(":443") { authority.removeLast(4) }
        let path = path.flatMap { $0.isEmpty ? nil : $0 } ?? "/"
        return "\(method.rawValue) \(scheme)://\(authority)\(path)"
    }

    static func key(for request: HTTPRequest) -> String {
        key(method: request.method, scheme: request.scheme, authority: request.authority, path: request.path)
    }
}

extension HTTPField.Name {
    /// `Cache-Status` (RFC 9211).
    package static let cacheStatus = HTTPField.Name("Cache-Status")!
}
