/// A value read from a ``RemoteCacheTier`` with its remaining time to live.
///
/// Thread-safety: `Sendable` when `Value` is.
public struct RemoteCacheEntry<Value> {
    /// The value.
    public var value: Value
    /// How long the shared copy still lives; `nil` when it never expires.
    /// A local tier that promotes the value should expire it no later.
    public var ttl: Duration?

    /// Creates an entry.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - ttl: The remaining time to live; `nil` for none.
    @inlinable  // so that a remote tier's reads build entries in code specialised for their value
    public init(value: Value, ttl: Duration?) {
        self.value = value
        self.ttl = ttl
    }
}

extension RemoteCacheEntry: Sendable where Value: Sendable {}
