#if Vapor
import Foundation
import NIOCore
import Stash
import Vapor

/// A Vapor `Cache` on a Stash `Cache`: bounded, with expiry, on memory, disk and Redis tiers in
/// any combination. Plug it in with `app.caches.use(.stash())`
/// (`Application/Caches/Provider/stash(countLimit:costLimit:)`); `app.cache` and `req.cache` then
/// use it.
///
/// ```swift
/// app.caches.use(.stash(countLimit: 100_000))                 // memory only, bounded
/// try await req.cache.set("greeting", to: "hello", expiresIn: .minutes(5))
/// let greeting = try await req.cache.get("greeting", as: String.self)
/// ```
///
/// Vapor's own `.memory` cache keeps every value until it is read after its expiry; this driver's
/// cache keeps its limits (count, cost, disk size) at every write and drops an expired value when
/// it is read or evicted.
///
/// ## The contract, as Vapor documents it
/// - `get(_:as:)` returns `nil` for a missing or expired key, and fails with `StashError`
///   (`decodingFailed`) when the stored value is not of the type asked (Vapor's Redis cache
///   fails there too, with a `DecodingError`).
/// - `set(_:to:)` replaces the value and its expiry (the value then has none); `set(_:to:)` with
///   `nil` removes the key from every tier, as `delete(_:)` does.
/// - `set(_:to:expiresIn:)` honours the expiry, in every tier (Vapor's protocol has a default for
///   it that drops the expiry, and caches that do not implement it, Fluent's among them, fall into
///   it). An expiry of zero seconds or less removes the key.
///
/// Values are stored as `JSONRecord`s (JSON with its expiry; give a disk or Redis tier
/// `DiskCodec.jsonRecord`). The memory tier also keeps the Swift value itself, so that a `get` of
/// the type that was set returns it without decoding.
///
/// - Note: Vapor has a protocol named `Cache` too: where both modules are imported, write
///   `Stash.Cache` for Stash's.
///
/// Thread-safe: a value type over thread-safe parts. Its futures complete on ``eventLoop``.
public struct StashVaporCache: Vapor.Cache, Sendable {
    /// The cache that holds the values.
    public let cache: Stash.Cache<JSONRecord>
    /// The event loop the futures complete on: the request's for `req.cache`.
    public let eventLoop: any EventLoop
    /// The clock of expiries: a wall clock, since records on disk or in Redis outlive the process.
    let clock: any CacheClock

    /// A driver on `cache`, completing its futures on `eventLoop`.
    ///
    /// - Parameters:
    ///   - cache: The cache, with any tiers. Keys are Vapor's keys as given.
    ///   - eventLoop: Where the futures complete.
    ///   - clock: The clock of expiries, read as nanoseconds since the Unix epoch. Defaults to
    ///     `WallClock()`; tests inject a `ManualClock` (the same one as the cache's tiers).
    /// - Complexity: O(1).
    public init(cache: Stash.Cache<JSONRecord>, on eventLoop: any EventLoop, clock: any CacheClock = WallClock()) {
        self.cache = cache
        self.eventLoop = eventLoop
        self.clock = clock
    }

    // MARK: - Async

    /// The value under `key`, or `nil` when there is none or it expired.
    ///
    /// Called on the driver itself (not through `any Cache`), this runs without a future.
    ///
    /// - Throws: `StashError`: `decodingFailed` when the value is not a `Value`; a tier's error.
    /// - Complexity: O(1) for a memory hit of the type that was set (no decoding); otherwise a
    ///   JSON decoding, after a disk or Redis read on a memory miss.
    public func get<Value: Decodable & Sendable>(_ key: String, as type: Value.Type) async throws -> Value? {
        guard let record = try await cache.value(forKey: key), record.isLive(at: clock.nanosecondsNow) else { return nil }
        guard let value = record.value(as: type) else {
            throw StashError(.decodingFailed, "the value under '\(key)' is not a \(Value.self)")
        }
        return value
    }

    /// Stores `value` under `key` with the given expiry (`nil`: none), or removes the key when
    /// `value` is `nil` or the expiry is not in the future.
    ///
    /// - Throws: `StashError` when a tier fails or the value does not encode.
    /// - Complexity: The value's JSON encoding and one write to every tier.
    public func set<Value: Encodable & Sendable>(_ key: String, to value: Value?, expiresIn expirationTime: CacheExpirationTime?) async throws {
        let ttl = expirationTime.map { Duration.seconds($0.seconds) }
        guard let value, ttl.map({ $0 > .zero }) ?? true else {
            _ = try await cache.removeValue(forKey: key)
            return
        }
        let record = try JSONRecord(value, expiresAt: JSONRecord.expiry(after: ttl, now: clock.nanosecondsNow))
        try await cache.setValue(record, forKey: key, ttl: ttl)
    }

    // MARK: - Vapor.Cache

    /// The value under `key` as a future on ``eventLoop``; see ``get(_:as:)-(_,Value.Type)``.
    public func get<Value: Decodable & Sendable>(_ key: String, as type: Value.Type) -> EventLoopFuture<Value?> {
        eventLoop.makeFutureWithTask { try await self.get(key, as: type) }
    }

    /// Stores `value` under `key` with no expiry, or removes the key for `nil`, as a future on
    /// ``eventLoop``.
    public func set<Value: Encodable & Sendable>(_ key: String, to value: Value?) -> EventLoopFuture<Void> {
        set(key, to: value, expiresIn: nil)
    }

    /// Stores `value` under `key` with the given expiry, or removes the key, as a future on
    /// ``eventLoop``; see ``set(_:to:expiresIn:)-(_,_,CacheExpirationTime?)``.
    public func set<Value: Encodable & Sendable>(_ key: String, to value: Value?, expiresIn expirationTime: CacheExpirationTime?) -> EventLoopFuture<Void> {
        eventLoop.makeFutureWithTask { try await self.set(key, to: value, expiresIn: expirationTime) }
    }

    /// The driver on the same cache, completing its futures on `request`'s event loop.
    public func `for`(_ request: Request) -> StashVaporCache {
        StashVaporCache(cache: cache, on: request.eventLoop, clock: clock)
    }
}
#endif  // Vapor
