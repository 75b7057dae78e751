/// What ``LoadingEngine`` needs from the cache it loads into: a way to store
/// a loaded value only if nothing changed the key since its load began.
///
/// A load takes a ticket when it starts; every write, removal and
/// invalidation of the key by anyone else voids the key's ticket, under the
/// same lock as the change itself; the loaded value is stored only while its
/// ticket holds. So a value loaded before a newer write or a removal is never
/// stored over it.
protocol LoadingTarget<Key, Value>: Sendable {
    associatedtype Key: Hashable & Sendable
    associatedtype Value: Sendable

    /// The fresh value of `key` in the fastest tier, without counting a
    /// lookup or changing recency; `nil` if there is none.
    func freshValue(forKey key: Key) -> Value?

    /// Takes a ticket for a load of `key` that starts now.
    func beginLoad(forKey key: Key) -> UInt64

    /// Stores `loaded` as `options` and its source say, if `ticket` still holds; forgets the ticket.
    ///
    /// - Returns: Whether the value was stored.
    func storeLoaded(_ loaded: LoadedValue<Value>, forKey key: Key, ticket: UInt64, options: LoadOptions) async -> Bool

    /// Stores the values a bulk load returned, each as ``storeLoaded(_:forKey:ticket:options:)``
    /// stores a value from the loader; a target may store them together.
    func storeBulkLoaded(_ loaded: [(key: Key, value: Value, ticket: UInt64)], options: LoadOptions) async

    /// Forgets `ticket`, for a load that failed.
    func endLoad(forKey key: Key, ticket: UInt64)
}

extension LoadingTarget {
    func storeBulkLoaded(_ loaded: [(key: Key, value: Value, ticket: UInt64)], options: LoadOptions) async {
        for (key, value, ticket) in loaded {
            _ = await storeLoaded(LoadedValue(value, source: .loader), forKey: key, ticket: ticket, options: options)
        }
    }
}
