/// A change another process made to a shared tier, which local tiers must reflect.
///
/// Thread-safety: a value type, `Sendable`.
public enum RemoteInvalidation: Sendable, Hashable {
    /// The key was written or removed: drop it from the local tiers.
    case key(String)
    /// Every key may have changed (a `removeAll`, or invalidations lost while the
    /// subscription was down): drop everything from the local tiers.
    case all
}
