/// The remote tier's public surface on ``Cache``; what the cache does with it is in
/// `CacheCore+Remote.swift`.
extension Cache {
    /// The tier shared with other processes, or `nil` for a local cache: a view
    /// for inspection. Changes made directly through it skip the local tiers.
    ///
    /// - Complexity: O(1). Thread-safe.
    public var remote: (any RemoteCacheTier<Value>)? { core.remoteLink?.tier }

    /// Returns once the cache receives other instances' invalidations: at once
    /// without a remote tier, or with one that is not ``RemoteCacheInvalidating``
    /// (it has none to receive), else when its subscription is first made (it is
    /// retried in the background while the remote tier is unreachable). Also
    /// returns when the cache is closed or the calling task is cancelled, so a
    /// shutdown never waits on it.
    ///
    /// Changes other instances make before then are not heard. A server can
    /// await it before taking traffic; tests await it before writing elsewhere.
    ///
    /// - Complexity: O(1). Suspends until subscribed; never blocks a thread. Thread-safe.
    public func waitUntilReceivingInvalidations() async {
        await core.remoteLink?.waitUntilSubscribed()
    }
}
