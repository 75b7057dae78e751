import Logging
import Stash

extension HTTPCache {
    /// The settings of an ``HTTPCache``, fixed at initialisation.
    ///
    /// ```swift
    /// var configuration = HTTPCache.Configuration(mode: .shared)
    /// configuration.directory = "/var/cache/stash-proxy"
    /// configuration.maximumEntrySize = 16 << 20
    /// let cache = try HTTPCache(configuration: configuration)
    /// ```
    ///
    /// A value type; thread-safe.
    public struct Configuration: Sendable {
        /// Private (one user) or shared (a proxy). Defaults to ``HTTPCacheMode/private``.
        public var mode: HTTPCacheMode
        /// The directory of the disk tier, or `nil` to keep responses in memory only. Defaults to `nil`.
        public var directory: String?
        /// The most bytes of responses (bodies plus fields, roughly) the memory tier holds.
        /// Strict. Defaults to 64 MiB.
        public var memoryCostLimit: Int
        /// The most URLs the memory tier holds. Strict. Defaults to 10 000.
        public var memoryCountLimit: Int
        /// A tier shared by several HTTP caches (a fleet of proxies or of servers), behind memory
        /// and disk, or `nil` for none. Defaults to `nil`.
        ///
        /// With StashRedis:
        ///
        /// ```swift
        /// configuration.remote = RedisCacheTier<HTTPCacheEntry>(
        ///     client: redis, codec: .httpCacheEntry, configuration: .init(keyPrefix: "http:"))
        /// ```
        ///
        /// The cache's store is then a `Cache` with this remote tier, with its rules: a response
        /// one instance stores is a hit for the others (read from the tier on their memory and disk
        /// misses, then kept in their tiers); with a `RemoteCacheInvalidating` tier, a response
        /// replaced, revalidated with new fields or removed by an unsafe request on one instance
        /// leaves the others' memory and disk too. Stored responses get no expiry in the tier: a
        /// stale response with a validator is still worth a conditional request, so the tier keeps
        /// it until it is replaced or removed, and Redis's `maxmemory-policy` (`allkeys-lru`)
        /// bounds it. A `304` that changes no field but `Date` updates the local memory tier only,
        /// as it does the disk tier. A remote failure never fails a request. The cache does not
        /// close the tier's client.
        public var remote: (any RemoteCacheTier<HTTPCacheEntry>)?
        /// The most bytes the disk tier holds. Strict. Defaults to 1 GiB.
        public var diskSizeLimit: Int
        /// The most URLs the disk tier holds. Strict. Defaults to `Int.max`: no limit.
        public var diskCountLimit: Int
        /// The longest body stored, in bytes; longer bodies stream through and are not stored.
        /// Defaults to 8 MiB: bodies up to this size are read whole before the response is returned.
        public var maximumEntrySize: Int
        /// The most bytes of header fields a stored response may have; larger ones pass through.
        /// Defaults to 64 KiB.
        public var maximumHeaderSize: Int
        /// The most variants (`Vary`) kept per URL, the oldest going first. Defaults to 16;
        /// clamped to 1...1024 (the most one stored record holds), with a warning.
        public var maximumVariantsPerURL: Int
        /// The longest heuristic freshness lifetime (10 % of the time since `Last-Modified`).
        /// Defaults to 1 day, as RFC 9111 §4.2.2 leaves the cap to the cache.
        public var heuristicFreshnessLimit: Duration
        /// How long past its expiry a stored response may still be served when the origin cannot
        /// be reached: the connection fails or closes, or the origin times out (an error status
        /// such as 503 does not count; `stale-if-error` covers it). RFC 9111 §4.2.4 lets a
        /// disconnected cache serve stale; this bounds how stale. A response that forbids stale
        /// (`must-revalidate`, `no-cache`; in shared mode `proxy-revalidate` and `s-maxage`) is
        /// never served this way. Must not be negative. Defaults to `.zero`: an unreachable origin
        /// is an error unless `stale-if-error` allows stale, as in URLSession and OkHttp;
        /// stash-proxy sets one day, as Squid and Apache Traffic Server serve stale for an
        /// unreachable origin by default.
        public var staleIfUnreachable: Duration
        /// Whether responses carry an RFC 9211 `Cache-Status` field. Defaults to `false`.
        public var addsCacheStatus: Bool
        /// The cache's name in `Cache-Status`. Defaults to `"Stash"`.
        public var cacheName: String
        /// The wall clock the cache reads for every age and freshness computation
        /// (nanoseconds since the Unix epoch, as `Date` fields are). Defaults to `WallClock`;
        /// tests inject a `ManualClock`.
        public var clock: any CacheClock
        /// Where background failures (a failed disk write, a failed background revalidation) are
        /// reported, once per incident. Defaults to a logger labelled `Stash.HTTPCache`.
        public var logger: Logger

        /// Creates a configuration with the defaults documented on each property.
        ///
        /// - Parameters:
        ///   - mode: Private or shared. Defaults to ``HTTPCacheMode/private``.
        ///   - directory: The disk tier's directory, or `nil` for memory only. Defaults to `nil`.
        public init(mode: HTTPCacheMode = .private, directory: String? = nil) {
            self.mode = mode
            self.directory = directory
            memoryCostLimit = 64 << 20
            memoryCountLimit = 10_000
            diskSizeLimit = 1 << 30
            diskCountLimit = .max
            remote = nil
            maximumEntrySize = 8 << 20
            maximumHeaderSize = 64 << 10
            maximumVariantsPerURL = 16
            heuristicFreshnessLimit = .seconds(86_400)
            staleIfUnreachable = .zero
            addsCacheStatus = false
            cacheName = "Stash"
            clock = WallClock()
            logger = Logger(label: "Stash.HTTPCache")
        }
    }
}
