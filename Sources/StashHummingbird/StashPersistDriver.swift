#if Hummingbird
import Foundation
import Hummingbird
import Logging
import Stash

/// A Hummingbird `PersistDriver` on a Stash `Cache`: bounded, with expiry, on memory, disk
/// and Redis tiers in any combination.
///
/// ```swift
/// let persist = try StashPersistDriver(memoryCountLimit: 100_000)            // memory only, bounded
/// let redisTier = RedisCacheTier(client: redis, codec: .jsonRecord)
/// let shared = StashPersistDriver(cache: try Cache(memory: MemoryCache(), disk: nil, remote: redisTier))
/// var app = Application(router: router, services: [persist])                 // closed on shutdown
/// try await persist.create(key: "session:42", value: session, expires: .seconds(3600))
/// ```
///
/// Hummingbird's own `MemoryPersistDriver` keeps every value until it expires and tidies every
/// ten minutes; this driver's cache keeps its limits (count, cost, disk size) at every write and
/// drops an expired value when it is read or evicted.
///
/// ## The contract, as Hummingbird documents it
/// - `create(key:value:expires:)` throws `PersistError.duplicate` when the key holds a live value,
///   atomically: of concurrent creates of one key, one succeeds. Across processes too when the
///   cache has a remote tier that inserts atomically (`RedisCacheTier`: `SET NX`); see
///   `Cache.insertValue(_:forKey:ttl:)`.
/// - `set(key:value:expires:)` overwrites; with `expires: nil` it keeps the expiry the key already
///   has (none when it has none). Sets of one key in this process apply in the order they are
///   called.
/// - `get(key:as:)` returns `nil` for a missing or expired key and throws
///   `PersistError.invalidConversion` when the stored value does not decode as the type asked.
/// - `getWithTTL(key:as:)` also returns the time left before expiry (`nil`: none).
/// - `remove(key:)` removes the key from every tier.
///
/// Values are stored as `JSONRecord`s: JSON (`JSONEncoder`) with their expiry in a 9-byte header,
/// so that the expiry travels with the value through every tier (give the disk and Redis tiers
/// `DiskCodec.jsonRecord`). The memory tier also keeps the Swift value itself, so that a `get` of
/// the type that was set returns it without decoding; a value read from disk or Redis is decoded
/// from its JSON.
///
/// ## Lifecycle
/// A `Service`: `run()` waits for graceful shutdown, then `shutdown()` closes a cache the driver
/// made itself (``init(memoryCountLimit:memoryCostLimit:directory:diskSizeLimit:logger:)``).
/// A cache given to ``init(cache:clock:)`` is the caller's to close.
///
/// Thread-safe: a value type over thread-safe parts; call it from any task.
public struct StashPersistDriver: PersistDriver {
    /// The cache that holds the values, as records of the driver's format.
    public let cache: Cache<JSONRecord>
    /// The clock of expiries: a wall clock, since records on disk or in Redis outlive the process.
    let clock: any CacheClock
    /// Whether ``shutdown()`` closes the cache (the driver made it).
    let ownsCache: Bool
    /// Orders the sets of one key in this process, so that a set keeping the expiry reads and
    /// writes without another set of the key in between.
    let setOrder = RemoteWriteOrder()

    /// A driver on `cache`, which may have any tiers.
    ///
    /// - Parameters:
    ///   - cache: The cache. Keys are the driver's keys as given. Give its disk or Redis tier
    ///     `DiskCodec.jsonRecord`.
    ///   - clock: The clock of expiries, read as nanoseconds since the Unix epoch. Defaults to
    ///     `WallClock()`; tests inject a `ManualClock` (the same one as the cache's tiers).
    /// - Complexity: O(1).
    public init(cache: Cache<JSONRecord>, clock: any CacheClock = WallClock()) {
        self.cache = cache
        self.clock = clock
        ownsCache = false
    }

    /// A driver on a cache of its own: a bounded memory tier, and a disk tier when `directory` is
    /// given. ``shutdown()`` closes it.
    ///
    /// - Parameters:
    ///   - memoryCountLimit: The most values in memory. Strict. Defaults to 100 000.
    ///   - memoryCostLimit: The most bytes of values in memory, counted as their JSON and header.
    ///     Strict. Defaults to 64 MiB.
    ///   - directory: The disk tier's directory, or `nil` for memory only. Defaults to `nil`.
    ///   - diskSizeLimit: The most bytes on disk. Strict. Defaults to 1 GiB.
    ///   - logger: Where the cache reports background failures. Defaults to a logger labelled
    ///     `Stash.StashPersistDriver`.
    /// - Throws: `StashError` when the disk tier cannot be opened.
    /// - Complexity: O(1) in the number of entries. Blocks on disk I/O to open the disk tier.
    public init(
        memoryCountLimit: Int = 100_000,
        memoryCostLimit: Int = 64 << 20,
        directory: String? = nil,
        diskSizeLimit: Int = 1 << 30,
        logger: Logger = Logger(label: "Stash.StashPersistDriver")
    ) throws(StashError) {
        let memory = MemoryCache<String, JSONRecord>(configuration: .init(
            label: "StashPersistDriver", countLimit: memoryCountLimit, costLimit: memoryCostLimit, logger: logger))
        let disk = try directory.map { directory throws(StashError) in
            try DiskCache<JSONRecord>(directory: directory, codec: .jsonRecord, configuration: .init(sizeLimit: diskSizeLimit, logger: logger))
        }
        cache = try Cache(memory: memory, disk: disk, cost: { record, _ in record.byteCount }, logger: logger)
        clock = WallClock()
        ownsCache = true
    }

    /// Stores `value` under `key` unless the key holds a live value.
    ///
    /// - Throws: `PersistError.duplicate` when it does; `StashError` when a tier fails
    ///   (`remoteFailed` when a remote tier cannot decide), or the value does not encode.
    /// - Complexity: The value's JSON encoding, plus `Cache.insertValue(_:forKey:ttl:)`: O(1) in
    ///   memory, a disk transaction, one Redis round trip with a Redis tier.
    public func create<Object: Codable & Sendable>(key: String, value: Object, expires: Duration?) async throws {
        let record = try JSONRecord(value, expiresAt: expiry(after: expires))
        guard try await cache.insertValue(record, forKey: key, ttl: expires) else {
            throw PersistError.duplicate
        }
    }

    /// Stores `value` under `key`, replacing any value; `expires: nil` keeps the key's expiry.
    ///
    /// - Throws: `StashError` when a tier fails or the value does not encode.
    /// - Complexity: The value's JSON encoding and one write to every tier; with `expires: nil`,
    ///   a read first. Sets of one key in this process wait for each other; other keys do not.
    public func set<Object: Codable & Sendable>(key: String, value: Object, expires: Duration?) async throws {
        let turn = setOrder.enqueue(key)
        await setOrder.waitForTurn(turn)
        defer { setOrder.finish(turn) }
        guard let expires else {
            // Keep the expiry of the live value, if any.
            let kept = try await liveRecord(forKey: key)?.expiresAt
            let record = try JSONRecord(value, expiresAt: kept)
            try await cache.setValue(record, forKey: key, ttl: record.timeToLive(at: clock.nanosecondsNow))
            return
        }
        try await cache.setValue(try JSONRecord(value, expiresAt: expiry(after: expires)), forKey: key, ttl: expires)
    }

    /// The value under `key`, or `nil` when there is none or it expired.
    ///
    /// - Throws: `PersistError.invalidConversion` when the stored value is not an `Object`;
    ///   `StashError` when a tier fails.
    /// - Complexity: O(1) for a memory hit of the type that was set (no decoding); otherwise a
    ///   JSON decoding, after a disk or Redis read on a memory miss.
    public func get<Object: Codable & Sendable>(key: String, as type: Object.Type) async throws -> Object? {
        try await getWithTTL(key: key, as: type)?.object
    }

    /// The value under `key` and the time it has left (`nil`: no expiry), or `nil` when there is
    /// none or it expired.
    ///
    /// - Throws: As ``get(key:as:)``.
    public func getWithTTL<Object: Codable & Sendable>(key: String, as type: Object.Type) async throws -> (object: Object, ttl: Duration?)? {
        guard let record = try await liveRecord(forKey: key) else { return nil }
        guard let object = record.value(as: Object.self) else { throw PersistError.invalidConversion }
        return (object, record.timeToLive(at: clock.nanosecondsNow))
    }

    /// Removes `key` from every tier.
    ///
    /// - Throws: `StashError` when a tier fails.
    public func remove(key: String) async throws {
        try await cache.removeValue(forKey: key)
    }

    /// Closes a cache the driver made (`Cache.close(timeout:)`: its background work finishes, its
    /// tiers close); does nothing for a cache given to it.
    public func shutdown() async throws {
        guard ownsCache else { return }
        await cache.close()
    }

    // MARK: - Records

    /// The live record under `key`: `nil` when missing or expired.
    private func liveRecord(forKey key: String) async throws -> JSONRecord? {
        guard let record = try await cache.value(forKey: key), record.isLive(at: clock.nanosecondsNow) else { return nil }
        return record
    }

    /// The wall-clock time `duration` from now, in nanoseconds; `nil` for no expiry.
    private func expiry(after duration: Duration?) -> Int64? {
        JSONRecord.expiry(after: duration, now: clock.nanosecondsNow)
    }
}
#endif  // Hummingbird
