import Logging

extension MemoryCache {
    /// Everything a ``MemoryCache`` is created with: its limits, its policy,
    /// its background work and where it gets the time and reports problems.
    ///
    /// A plain value: `Sendable`, O(1) to copy, no thread-safety concerns of
    /// its own. Write it once and reuse it:
    ///
    /// ```swift
    /// let images = MemoryCache<URL, Image>(configuration: .init(
    ///     label: "images", countLimit: 500, costLimit: 64 << 20, removesAllOnMemoryPressure: false))
    /// ```
    ///
    /// ## Invalid values
    /// Nothing is validated here. The cache validates when it is created, as
    /// its setters do: a negative ``countLimit``, ``costLimit`` or
    /// ``ageLimit`` is clamped to 0 with one warning to ``logger``, and a zero
    /// or negative ``autoTrimInterval`` turns the sweep off with one warning.
    /// Neither the initialiser nor a setter throws or traps.
    public struct Configuration: Sendable {
        /// A label for logs (like swift-log's `Logger(label:)`), not a file or folder name.
        /// Defaults to `""`.
        public var label: String

        /// The most entries the cache holds. Strict. Defaults to `Int.max`: no limit.
        public var countLimit: Int

        /// The most total cost the cache holds. Strict. Defaults to `Int.max`: no limit.
        public var costLimit: Int

        /// How long after its last write an entry expires. Strict. Defaults
        /// to `nil`: never.
        public var ageLimit: Duration?

        /// Which entry goes first when a limit is reached. Defaults to
        /// ``EvictionPolicy/s3FIFO``: it hits more than LRU on real workloads
        /// (loops and scans most of all) and a read only bumps a counter.
        public var policy: EvictionPolicy

        /// How often a background sweep removes expired entries. Defaults to
        /// 5 seconds; `nil` turns it off.
        ///
        /// Expired entries are never returned either way: the sweep only
        /// gives their memory back sooner, in locked batches, and skips the
        /// scan when no entry can expire. 5 seconds keeps an idle cache's cost
        /// negligible while memory held by dead entries stays short-lived.
        public var autoTrimInterval: Duration?

        /// Whether large batches of evicted values (64 or more, as from
        /// ``MemoryCache/removeAll()``) are released on a background queue
        /// rather than on the calling thread. Defaults to `true`: releasing
        /// many values can take long enough to stall the caller.
        public var releasesValuesInBackground: Bool

        /// Whether the cache empties itself when the system reports memory
        /// pressure. Defaults to `true`: a cache is the cheapest memory to give back.
        public var removesAllOnMemoryPressure: Bool

        /// Whether the cache empties itself when the app enters the
        /// background. Defaults to
        /// ``MemoryCacheDefaults/removesAllOnEnteringBackground``: `true` on
        /// iOS, tvOS and visionOS, `false` elsewhere.
        public var removesAllOnEnteringBackground: Bool

        /// The source of time for expiry. Defaults to ``SystemClock``; tests
        /// inject a ``ManualClock``.
        public var clock: any CacheClock

        /// Where the cache reports misuse and background failures. Defaults
        /// to a logger labelled `Stash.MemoryCache`.
        public var logger: Logger

        /// The options of `value(forKey:options:orLoad:)` calls
        /// that pass none: time to live, refresh ahead, fail-safe, timeouts and
        /// cached errors. Defaults to `LoadOptions()`: a plain cache's behaviour.
        public var loadOptions: LoadOptions

        /// The cost of a value that a get-or-load call loaded and stored.
        /// Defaults to `nil`: cost 0, as ``MemoryCache/setValue(_:forKey:cost:ttl:)``
        /// without a cost. Called outside the cache's lock; must be cheap.
        public var loadedValueCost: (@Sendable (Value) -> Int)?

        /// Creates a configuration; every parameter defaults to the
        /// documented default of its property.
        ///
        /// - Parameters:
        ///   - label: A label for logs. Defaults to `""`.
        ///   - countLimit: The most entries. Defaults to `Int.max`: no limit.
        ///   - costLimit: The most total cost. Defaults to `Int.max`: no limit.
        ///   - ageLimit: How long an entry lives after its last write. Defaults to `nil`: forever.
        ///   - policy: The eviction order. Defaults to ``EvictionPolicy/s3FIFO``.
        ///   - autoTrimInterval: The background sweep's period. Defaults to 5 seconds; `nil` turns it off.
        ///   - releasesValuesInBackground: Whether large batches are released off the caller's thread. Defaults to `true`.
        ///   - removesAllOnMemoryPressure: Whether memory pressure empties the cache. Defaults to `true`.
        ///   - removesAllOnEnteringBackground: Whether entering the background empties the cache.
        ///     Defaults to ``MemoryCacheDefaults/removesAllOnEnteringBackground``.
        ///   - clock: The source of time for expiry. Defaults to ``SystemClock``.
        ///   - logger: Where problems are reported. Defaults to a logger labelled `Stash.MemoryCache`.
        ///   - loadOptions: The options of get-or-load calls that pass none. Defaults to `LoadOptions()`.
        ///   - loadedValueCost: The cost of a loaded value. Defaults to `nil`: cost 0.
        /// - Complexity: O(1). Does not validate (see ``Configuration``).
        public init(
            label: String = "",
            countLimit: Int = .max,
            costLimit: Int = .max,
            ageLimit: Duration? = nil,
            policy: EvictionPolicy = .s3FIFO,
            autoTrimInterval: Duration? = .seconds(5),
            releasesValuesInBackground: Bool = true,
            removesAllOnMemoryPressure: Bool = true,
            removesAllOnEnteringBackground: Bool = MemoryCacheDefaults.removesAllOnEnteringBackground,
            clock: any CacheClock = SystemClock(),
            logger: Logger = Logger(label: "Stash.MemoryCache"),
            loadOptions: LoadOptions = LoadOptions(),
            loadedValueCost: (@Sendable (Value) -> Int)? = nil
        ) {
            self.label = label
            self.countLimit = countLimit
            self.costLimit = costLimit
            self.ageLimit = ageLimit
            self.policy = policy
            self.autoTrimInterval = autoTrimInterval
            self.releasesValuesInBackground = releasesValuesInBackground
            self.removesAllOnMemoryPressure = removesAllOnMemoryPressure
            self.removesAllOnEnteringBackground = removesAllOnEnteringBackground
            self.clock = clock
            self.logger = logger
            self.loadOptions = loadOptions
            self.loadedValueCost = loadedValueCost
        }
    }
}
