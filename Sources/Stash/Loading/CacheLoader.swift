/// Loads the value of a key for a get-or-load call: the protocol form of a
/// loader closure, as Caffeine's `CacheLoader`, for hot paths.
///
/// ```swift
/// struct UserLoader: CacheLoader {
///     let database: Database
///     func load(_ id: UUID) async throws -> User { try await database.user(id) }
/// }
///
/// let loader = UserLoader(database: database)
/// let user = try await users.value(forKey: id, orLoad: loader)
/// ```
///
/// Why it exists beside the closure form: a loader closure is escaping (a
/// load runs in a task of its own), so Swift forms the closure at every call,
/// hit or not, retaining what it captures, or allocating a context when it
/// captures more than one value. A loader value is passed as it is and copied
/// into a closure only when a load starts, so a hit through it costs the
/// plain lookup.
///
/// Conforming types must be `Sendable`: a load runs in a task of its own.
public protocol CacheLoader<Key, Value>: Sendable {
    /// The cache's key type.
    associatedtype Key: Hashable & Sendable
    /// The cache's value type.
    associatedtype Value: Sendable

    /// Loads the value of `key`.
    ///
    /// Called at most once at a time per key by the get-or-load calls of one
    /// cache, in a task of its own, outside every lock of the cache.
    ///
    /// - Throws: Any error: it reaches every caller waiting for this load, and
    ///   may be answered with a stale value (``LoadOptions/staleIfError``).
    func load(_ key: Key) async throws -> Value
}
