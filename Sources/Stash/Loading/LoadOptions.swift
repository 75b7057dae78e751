/// How a cache loads a missing value through `value(forKey:orLoad:)`: how
/// long the value lives, when it is refreshed, how long it may stand in for a
/// failing source, how long a caller waits, and whether errors are cached.
///
/// Set once per cache (``MemoryCache/Configuration/loadOptions``,
/// ``Cache/loadOptions``) and overridden per call. Every property defaults to
/// the behaviour of a plain cache: no expiry, no refresh ahead, no stale
/// values, no timeout, no cached errors.
///
/// ```swift
/// let options = LoadOptions(ttl: .seconds(60), refreshAfter: .seconds(45), staleIfError: .seconds(300))
/// let user = try await users.value(forKey: id, options: options) { id in try await database.user(id) }
/// ```
///
/// A call's `options` replace the cache's as a whole: a property left at its
/// default in them is not taken from the cache's. To change one property for
/// a call, start from the cache's options (``MemoryCache/loadOptions``,
/// ``Cache/loadOptions``):
///
/// ```swift
/// var shortLived = users.loadOptions
/// shortLived.ttl = .seconds(5)
/// let user = try await users.value(forKey: id, options: shortLived) { id in try await database.user(id) }
/// ```
///
/// The names follow the anchors users know: Caffeine's `refreshAfterWrite`,
/// FusionCache's fail-safe and soft and hard factory timeouts, and HTTP's
/// `stale-if-error`. A plain value: `Sendable`, O(1) to copy.
public struct LoadOptions: Sendable, Hashable {
    /// How long a loaded value stays fresh. Defaults to `nil`: until evicted.
    public var ttl: Duration?

    /// How old a value may be before a hit on it also reloads it in the
    /// background (once, however many hits come meanwhile); the hit itself
    /// returns the value it found at once. Defaults to `nil`: never. Only
    /// meaningful below ``ttl``.
    public var refreshAfter: Duration?

    /// How long past its expiry a loaded value may still be returned when the
    /// loader throws or times out: the fail-safe. Defaults to `nil`: never.
    ///
    /// Such expired values are kept that much longer (they count toward the
    /// cache's limits and may be evicted like any entry), but a plain
    /// `value(forKey:)` never returns them.
    public var staleIfError: Duration?

    /// How long a caller waits for a load before it takes the stale value, if
    /// there is one (see ``staleIfError``); the load goes on and stores its
    /// value when it ends. Defaults to `nil`: as long as the load takes. With
    /// no stale value to return, the caller keeps waiting, up to
    /// ``hardTimeout``.
    public var softTimeout: Duration?

    /// How long a caller waits for a load at most: then it gets the stale
    /// value if there is one, else ``StashError/Code/timedOut``. The load goes
    /// on and stores its value when it ends. Defaults to `nil`: as long as the
    /// load takes.
    public var hardTimeout: Duration?

    /// How long a loader's error is remembered and thrown again (or answered
    /// with the stale value, if there is one) without calling the loader:
    /// negative caching, which also keeps a failing source from being asked
    /// again by every caller. Defaults to `nil`: errors are not cached, and
    /// the next caller loads again.
    public var errorTTL: Duration?

    /// How long the fleet-wide lock on a missing key holds, for a ``Cache``
    /// with a remote tier: with it set, one instance of the fleet loads the
    /// key while the others wait for the value it writes to the remote tier.
    /// Defaults to `nil`: no fleet lock; each instance loads on its own.
    ///
    /// Choose it longer than a load takes: a holder that crashes (or outlives
    /// it) keeps the fleet waiting this long at most, after which another
    /// instance loads. Ignored by ``MemoryCache``, by a ``Cache`` without a
    /// remote tier, and by one whose remote tier is not ``RemoteCacheLocking``. See ``Cache/value(forKey:options:orLoad:)`` for what each
    /// instance does.
    public var fleetLockTTL: Duration?

    /// Creates options; every parameter defaults to the behaviour of a plain cache.
    ///
    /// - Parameters:
    ///   - ttl: How long a loaded value stays fresh. Default `nil`: until evicted.
    ///   - refreshAfter: When a hit also reloads in the background. Default `nil`: never.
    ///   - staleIfError: How long past expiry a value may stand in for a failing load. Default `nil`.
    ///   - softTimeout: When a caller takes the stale value instead of waiting. Default `nil`.
    ///   - hardTimeout: When a caller stops waiting. Default `nil`.
    ///   - errorTTL: How long a loader's error is cached. Default `nil`: not cached.
    ///   - fleetLockTTL: How long the fleet-wide load lock holds, for a ``Cache``
    ///     with a ``RemoteCacheLocking`` remote tier. Default `nil`: no fleet lock.
    public init(
        ttl: Duration? = nil,
        refreshAfter: Duration? = nil,
        staleIfError: Duration? = nil,
        softTimeout: Duration? = nil,
        hardTimeout: Duration? = nil,
        errorTTL: Duration? = nil,
        fleetLockTTL: Duration? = nil
    ) {
        self.ttl = ttl
        self.refreshAfter = refreshAfter
        self.staleIfError = staleIfError
        self.softTimeout = softTimeout
        self.hardTimeout = hardTimeout
        self.errorTTL = errorTTL
        self.fleetLockTTL = fleetLockTTL
    }
}

extension LoadOptions {
    /// The refresh age of a get-or-load call given its `options`, in
    /// nanoseconds (`Int64.max` for none), or `cacheDefault` (the cache's own
    /// options' age, precomputed) when it passes none: a hit reads this field
    /// alone, without copying the options, which are too large for registers.
    @inlinable @inline(__always)
    static func refreshAge(of options: LoadOptions?, cacheDefault: Int64) -> Int64 {
        if let options { options.refreshAfter?.nanosecondsClamped ?? .max } else { cacheDefault }
    }
}
