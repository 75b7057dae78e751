/// How one request uses the cache: the equivalents of Foundation's
/// `URLRequest.CachePolicy`, plus ``noStore``.
///
/// Passed to ``HTTPCache/response(for:body:policy:origin:)``; the default is
/// ``useProtocolPolicy``. The request's own `Cache-Control` directives apply
/// under every policy that consults the store.
///
/// A value type; thread-safe.
public struct HTTPCachePolicy: Sendable, Hashable, CustomStringConvertible {
    enum Kind: Sendable, Hashable {
        case useProtocolPolicy, revalidate, reload, returnStoredElseLoad, returnStoredDontLoad, noStore
    }
    let kind: Kind

    /// RFC 9111: serve fresh responses, revalidate stale ones, store what may be stored. The default.
    public static let useProtocolPolicy = HTTPCachePolicy(kind: .useProtocolPolicy)
    /// Always ask the origin, conditionally when a stored response has a validator
    /// (`URLRequest.CachePolicy.reloadRevalidatingCacheData`).
    public static let revalidate = HTTPCachePolicy(kind: .revalidate)
    /// Ignore the stored response and fetch anew; the new response is stored if allowed
    /// (`reloadIgnoringLocalCacheData`).
    public static let reload = HTTPCachePolicy(kind: .reload)
    /// Serve any stored response, however stale; load only on a miss (`returnCacheDataElseLoad`).
    public static let returnStoredElseLoad = HTTPCachePolicy(kind: .returnStoredElseLoad)
    /// Serve any stored response, however stale; never call the origin: a miss is a
    /// `504 Gateway Timeout` response (`returnCacheDataDontLoad`).
    public static let returnStoredDontLoad = HTTPCachePolicy(kind: .returnStoredDontLoad)
    /// Bypass the cache: neither read nor write; unsafe methods still invalidate.
    public static let noStore = HTTPCachePolicy(kind: .noStore)

    /// The policy's name, such as `"useProtocolPolicy"`.
    public var description: String { "\(kind)" }
}
