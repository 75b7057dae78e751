/// A ``RemoteCacheTier`` that tells each process what the others changed: what lets ``Cache``
/// drop a local copy as soon as another instance writes or removes its key.
///
/// A capability of its own, so that a store with no publish-subscribe need not fake one (a
/// ``Cache`` over such a tier keeps its local copies until their time to live ends or they are
/// evicted). `RedisCacheTier` conforms (Redis pub/sub).
///
/// Contract for conformers:
/// - Every successful ``RemoteCacheTier/setValue(_:forKey:ttl:)``,
///   ``RemoteCacheTier/removeValue(forKey:)`` and ``RemoteCacheTier/removeAll()`` (and
///   ``RemoteCacheInserting/insertValue(_:forKey:ttl:)`` that stored) tells every *other*
///   subscribed process, whose handler then gets the key (never one's own changes). A change
///   is told after it is applied, so that a process which drops its local copy on hearing of
///   it and then reads the store gets the new value.
/// - When the subscription drops, the handler gets ``RemoteInvalidation/subscriptionLost``;
///   once it is restored, ``RemoteInvalidation/all``: changes told meanwhile were lost. (A tier
///   that cannot tell when its subscription drops sends only the ``RemoteInvalidation/all``;
///   the cache then repairs stale keys as soon as a call succeeds, and an
///   ``RemoteInvalidation/all`` that arrives after that repair drops those keys' local copies.)
///
/// One tier serves one ``Cache``: the cache starts and stops its subscription.
///
/// Thread-safety: conformers are safe to call from any thread or task.
public protocol RemoteCacheInvalidating<Value>: RemoteCacheTier {
    /// Starts delivering other processes' changes to `handler`, replacing any
    /// earlier handler, and keeps delivering them across lost connections.
    ///
    /// - Parameter handler: Called with each invalidation, on an arbitrary thread;
    ///   it must return quickly and never block.
    /// - Throws: The store's error type when the subscription cannot be made now.
    func startReceivingInvalidations(_ handler: @escaping @Sendable (RemoteInvalidation) -> Void) async throws

    /// Stops delivering invalidations. Does nothing when none are delivered.
    func stopReceivingInvalidations() async
}
