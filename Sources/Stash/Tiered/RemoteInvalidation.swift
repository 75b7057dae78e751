/// What a shared tier tells a ``Cache`` about changes other processes made,
/// which its local tiers must reflect.
///
/// Thread-safety: a value type, `Sendable`.
public enum RemoteInvalidation: Sendable, Hashable {
    /// The key was written or removed: drop it from the local tiers.
    case key(String)
    /// Every key may have changed (a `removeAll`, or invalidations lost while the
    /// subscription was down): drop everything from the local tiers.
    case all
    /// The subscription dropped: invalidations sent from now on may be lost, until the
    /// restored subscription delivers ``RemoteInvalidation/all``. Nothing is dropped yet;
    /// a ``Cache`` holds back the repair of its stale keys until then, so that the
    /// ``RemoteInvalidation/all`` cannot drop local changes whose shared copies the
    /// repair has already removed. So a tier delivers nothing between this and the `.all` of
    /// its return: an `.all` of another instance's, delivered first, would be taken for the
    /// return, and the repairs would begin before the tier is ready (before it has emptied a
    /// restarted store, say). `RedisCacheTier` drops other instances' messages in that window.
    case subscriptionLost
}
