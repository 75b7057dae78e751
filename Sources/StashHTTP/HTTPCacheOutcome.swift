/// How the cache produced a response.
///
/// Also rendered as an RFC 9211 `Cache-Status` field value by
/// ``cacheStatus(cacheName:)``.
///
/// A value type; thread-safe.
public struct HTTPCacheOutcome: Sendable, Hashable, CustomStringConvertible {
    enum Kind: Sendable, Hashable { case hit, stale, revalidated, miss, bypass }
    let kind: Kind

    /// A fresh stored response was served; the origin was not called.
    public static let hit = HTTPCacheOutcome(kind: .hit)
    /// A stale stored response was served: allowed by `stale-while-revalidate`,
    /// `stale-if-error`, `max-stale` or the request's policy.
    public static let stale = HTTPCacheOutcome(kind: .stale)
    /// A stored response was validated with the origin (a `304 Not Modified`) and served.
    public static let revalidated = HTTPCacheOutcome(kind: .revalidated)
    /// The response came from the origin (it may have been stored). Also the outcome of the
    /// `504` answered to an `only-if-cached` or ``HTTPCachePolicy/returnStoredDontLoad`` miss.
    public static let miss = HTTPCacheOutcome(kind: .miss)
    /// The cache was not used: an unsafe method, a `Range` request the store could not answer, or
    /// ``HTTPCachePolicy/noStore``.
    public static let bypass = HTTPCacheOutcome(kind: .bypass)

    /// `"hit"`, `"stale"`, `"revalidated"`, `"miss"` or `"bypass"`.
    public var description: String { "\(kind)" }

    /// The RFC 9211 `Cache-Status` value for this outcome, such as `Stash; hit` or
    /// `Stash; fwd=stale; fwd-status=304`.
    ///
    /// - Parameter cacheName: The cache's name in the field. Defaults to `"Stash"`.
    /// - Returns: One list member of a `Cache-Status` field.
    /// - Complexity: O(1).
    public func cacheStatus(cacheName: String = "Stash") -> String {
        switch kind {
        case .hit: "\(cacheName); hit"
        case .stale: "\(cacheName); hit; detail=stale"
        case .revalidated: "\(cacheName); fwd=stale; fwd-status=304"
        case .miss: "\(cacheName); fwd=uri-miss"
        case .bypass: "\(cacheName); fwd=bypass"
        }
    }
}
