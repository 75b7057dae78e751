/// A value a load produced, and how it was got: what storing it must do.
///
/// ``LoadingEngine`` runs loaders that return one. A caller's loader is wrapped by
/// ``fromLoader(_:)`` (``Source/loader``); `Cache`'s fleet loader (`CacheCore+FleetLoad.swift`)
/// says whether it loaded holding the fleet lock or took another instance's value.
///
/// Thread-safety: a value type, `Sendable`.
struct LoadedValue<Value: Sendable>: Sendable {
    /// How a load got its value.
    enum Source: Sendable {
        /// The caller's loader produced it: stored as the load's options say, and counted as a load.
        case loader
        /// The caller's loader produced it while this instance held the fleet lock: written to
        /// every tier, the remote one waited for, then the lock is released, so that an instance
        /// that finds the lock free also finds the value. Counted as a load.
        case loaderHoldingFleetLock(FleetLoadLock)
        /// Another instance of the fleet loaded it: kept in the local tiers for the shared copy's
        /// remaining time to live (`nil`: none), nothing sent back. Counted as a fleet read.
        case fleet(ttl: Duration?)
    }

    var value: Value
    var source: Source

    init(_ value: Value, source: Source) {
        self.value = value
        self.source = source
    }

    /// `loader`, returning its values as ``Source/loader``.
    static func fromLoader<Key>(
        _ loader: @escaping @Sendable (Key) async throws -> Value
    ) -> @Sendable (Key) async throws -> LoadedValue {
        { LoadedValue(try await loader($0), source: .loader) }
    }
}
