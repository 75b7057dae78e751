/// Whom a cache serves: one user (a private cache, such as an HTTP client's)
/// or many (a shared cache, such as a reverse proxy or CDN tier).
///
/// Chosen once, in ``HTTPCache/Configuration/mode``. The difference
/// (RFC 9111 §3, §3.5, §5.2.2): a shared cache never stores `private`
/// responses, stores responses to requests carrying `Authorization` only when
/// the response allows it (`public`, `s-maxage` or `must-revalidate`), prefers
/// `s-maxage` to `max-age`, and honours `proxy-revalidate`.
///
/// A value type; thread-safe.
public struct HTTPCacheMode: Sendable, Hashable, CustomStringConvertible {
    enum Kind: Sendable, Hashable { case `private`, shared }
    let kind: Kind

    /// A cache for one user, such as an HTTP client's: stores `private` responses.
    public static let `private` = HTTPCacheMode(kind: .private)
    /// A cache for many users, such as a reverse proxy: honours `s-maxage`, never stores `private` responses.
    public static let shared = HTTPCacheMode(kind: .shared)

    /// Whether this is the shared mode.
    public var isShared: Bool { kind == .shared }

    /// `"private"` or `"shared"`.
    public var description: String { kind == .shared ? "shared" : "private" }
}
