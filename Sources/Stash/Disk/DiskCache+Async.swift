#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The async forms of ``DiskCache``'s operations.
///
/// Each runs the synchronous operation on the cache's own dispatch queue and
/// suspends the caller meanwhile, so blocking disk I/O never occupies a thread
/// of Swift's cooperative pool; but `value(forKey:)` first tries a read that
/// blocks on nothing but a SQLite lookup, on the caller's thread. Calls from one
/// task run in order.
extension DiskCache {
    /// The value for `key`, or `nil`. See `value(forKey:)`.
    ///
    /// A value stored in the manifest (up to the inline threshold, 32 KiB by
    /// default) is read on the caller's thread when a reader connection is idle:
    /// a SQLite lookup of a few microseconds when the manifest's pages are in the
    /// OS cache, which takes none of the cache's locks (rarely, while another
    /// connection recovers the write-ahead log after a crash, SQLite makes it
    /// wait, at most the busy timeout). Everything else (a value
    /// in a file of its own, every reader busy, an expired or damaged entry) runs
    /// on the cache's queue as the other async calls do.
    ///
    /// - Complexity: O(log n) in the number of entries, plus O(size) to copy and
    ///   decode the value. Thread-safe.
    public func value(forKey key: String) async throws(StashError) -> Value? {
        if case .done(let value) = try core.valueOnCallerThread(forKey: key) { return value }
        return try await core.run { [self] () throws(StashError) in try value(forKey: key) }
    }

    /// Whether there is a fresh value for `key`. See `contains(_:)`.
    public func contains(_ key: String) async throws(StashError) -> Bool {
        try await core.run { [self] () throws(StashError) in try contains(key) }
    }

    /// The extended data for `key`. See `extendedData(forKey:)`.
    public func extendedData(forKey key: String) async throws(StashError) -> Data? {
        try await core.run { [self] () throws(StashError) in try extendedData(forKey: key) }
    }

    /// Stores `value` for `key`. See `setValue(_:forKey:ttl:extendedData:)`.
    public func setValue(_ value: Value, forKey key: String, ttl: Duration? = nil, extendedData: Data? = nil) async throws(StashError) {
        try await core.run { [self] () throws(StashError) in
            try setValue(value, forKey: key, ttl: ttl, extendedData: extendedData)
        }
    }

    /// Removes the value for `key`. See `removeValue(forKey:)`.
    @discardableResult
    public func removeValue(forKey key: String) async throws(StashError) -> Bool {
        try await core.run { [self] () throws(StashError) in try removeValue(forKey: key) }
    }

    /// Removes every entry. See `removeAll()`.
    public func removeAll() async throws(StashError) {
        try await core.run { [self] () throws(StashError) in try removeAll() }
    }

    /// Removes every entry, reporting progress. See `removeAll(progress:)`.
    ///
    /// `progress` runs on the cache's queue.
    public func removeAll(progress: @escaping @Sendable (_ removed: Int, _ total: Int) -> Void) async throws(StashError) {
        try await core.run { [self] () throws(StashError) in try removeAll(progress: progress) }
    }

    /// Trims to `maxCount` entries. See `trim(toCount:)`.
    public func trim(toCount maxCount: Int) async throws(StashError) {
        try await core.run { [self] () throws(StashError) in try trim(toCount: maxCount) }
    }

    /// Trims to `maxSize` bytes. See `trim(toSize:)`.
    public func trim(toSize maxSize: Int) async throws(StashError) {
        try await core.run { [self] () throws(StashError) in try trim(toSize: maxSize) }
    }

    /// Removes entries written `age` or longer ago. See `trim(toAge:)`.
    public func trim(toAge age: Duration) async throws(StashError) {
        try await core.run { [self] () throws(StashError) in try trim(toAge: age) }
    }

    /// Removes expired entries. See `removeExpired()`.
    public func removeExpired() async throws(StashError) {
        try await core.run { [self] () throws(StashError) in try removeExpired() }
    }

    /// Writes pending access times. See `flush()`.
    public func flush() async throws(StashError) {
        try await core.run { [self] () throws(StashError) in try flush() }
    }

    /// Closes the cache, after a consistency check under way. See `close()`.
    public func close() async {
        _ = try? await core.run { [self] () throws(StashError) in close() }
    }

    /// Runs the consistency check. See `verify()`.
    public func verify() async throws(StashError) -> RepairReport {
        try await core.run { [self] () throws(StashError) in try verify() }
    }

    /// What the cache holds on disk. See `usage()`.
    public func usage() async throws(StashError) -> DiskUsage {
        try await core.run { [self] () throws(StashError) in try usage() }
    }

    /// The number of entries. See ``count``.
    ///
    /// A method, since a property cannot have both a blocking and an async getter.
    public func count() async throws(StashError) -> Int {
        try await core.run { [self] () throws(StashError) in try count }
    }

    /// The total size of the stored values. See ``totalSize``.
    public func totalSize() async throws(StashError) -> Int {
        try await core.run { [self] () throws(StashError) in try totalSize }
    }
}
