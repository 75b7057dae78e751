import Logging

/// The settings of a ``DiskCache``, other than its directory and codec: where
/// values go, the limits, the background trim, the clock and the logger.
///
/// Every property has a documented default, so a configuration names only what
/// it changes:
///
/// ```swift
/// var configuration = DiskCache<Data>.Configuration()
/// configuration.sizeLimit = 500 << 20
/// configuration.ageLimit = .seconds(7 * 86_400)
/// let avatars = try DiskCache<Data>(directory: "/var/cache/myapp/avatars", configuration: configuration)
/// ```
///
/// Negative limits follow the policy of every limit in Stash: the cache treats
/// them as 0 and logs a warning; it never throws or traps for them.
///
/// A value type: `Sendable`, safe to share between threads. Also spelled
/// `DiskCache<Value>.Configuration`.
public struct DiskCacheConfiguration: Sendable {
    /// Where values go: inline in SQLite, in files, or by size. Defaults to
    /// ``DiskStorageKind/default``.
    public var storage: DiskStorageKind
    /// The most entries. Strict. Defaults to `Int.max`: no limit.
    public var countLimit: Int
    /// The most bytes of values. Strict. Defaults to `Int.max`: no limit.
    public var sizeLimit: Int
    /// How long after its last write an entry expires. Strict. Defaults to
    /// `nil`: never.
    public var ageLimit: Duration?
    /// Free bytes to keep on the volume; the background trim evicts until there
    /// are. Not strict. Defaults to 0: none.
    public var freeDiskSpaceLimit: Int
    /// How often the background trim runs. Defaults to 60 seconds; `nil` turns
    /// it off.
    public var autoTrimInterval: Duration?
    /// The source of time. Defaults to ``WallClock``: times are stored, so they
    /// must survive restarts.
    public var clock: any CacheClock
    /// Where background failures and repairs are reported. Defaults to a logger
    /// labelled `Stash.DiskCache`.
    public var logger: Logger

    /// Creates a configuration; every parameter defaults to the value its
    /// property documents.
    ///
    /// - Complexity: O(1).
    public init(
        storage: DiskStorageKind = .default,
        countLimit: Int = .max,
        sizeLimit: Int = .max,
        ageLimit: Duration? = nil,
        freeDiskSpaceLimit: Int = 0,
        autoTrimInterval: Duration? = .seconds(60),
        clock: any CacheClock = WallClock(),
        logger: Logger = Logger(label: "Stash.DiskCache")
    ) {
        self.storage = storage
        self.countLimit = countLimit
        self.sizeLimit = sizeLimit
        self.ageLimit = ageLimit
        self.freeDiskSpaceLimit = freeDiskSpaceLimit
        self.autoTrimInterval = autoTrimInterval
        self.clock = clock
        self.logger = logger
    }
}
