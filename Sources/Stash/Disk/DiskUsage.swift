/// What a disk cache holds on disk: its bytes of values, how many entries are
/// inline and how many in files, its access-time range and the manifest's size;
/// returned by `usage()` (and printed by `stash stats`).
///
/// Its lookup counters are elsewhere: ``DiskCache/statistics``.
///
/// Times are nanoseconds on the cache's clock; for a disk cache using the default
/// ``WallClock`` that is nanoseconds since the Unix epoch.
///
/// A value type: `Sendable`, safe to share between threads.
public struct DiskUsage: Sendable, Hashable {
    /// The sum of the entries' value sizes, in bytes (keys and extended data excluded).
    public var totalSize: Int
    /// The number of entries whose value is stored inline in the manifest.
    public var inlineCount: Int
    /// The number of entries whose value is stored in a file of its own.
    public var fileCount: Int
    /// The least recent last-access time of any entry; `nil` when empty.
    public var oldestAccessTime: Int64?
    /// The most recent last-access time of any entry; `nil` when empty.
    public var newestAccessTime: Int64?
    /// The bytes the manifest occupies on disk (`manifest.sqlite` and its `-wal`).
    public var manifestBytes: Int

    /// Creates a usage from its parts. Every value defaults to zero or `nil`:
    /// the usage of an empty cache.
    public init(
        totalSize: Int = 0,
        inlineCount: Int = 0,
        fileCount: Int = 0,
        oldestAccessTime: Int64? = nil,
        newestAccessTime: Int64? = nil,
        manifestBytes: Int = 0
    ) {
        self.totalSize = totalSize
        self.inlineCount = inlineCount
        self.fileCount = fileCount
        self.oldestAccessTime = oldestAccessTime
        self.newestAccessTime = newestAccessTime
        self.manifestBytes = manifestBytes
    }

    /// The number of entries, including expired ones not yet removed:
    /// ``inlineCount`` + ``fileCount``.
    ///
    /// - Complexity: O(1).
    public var count: Int { inlineCount + fileCount }
}
