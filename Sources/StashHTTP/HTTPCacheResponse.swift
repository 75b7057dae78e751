import HTTPTypes

/// A response produced by ``HTTPCache``: the head, the body and how it was produced.
///
/// A value type; thread-safe. The body is single-pass when it streams from the origin.
public struct HTTPCacheResponse: Sendable {
    /// The status and header fields. A stored response carries `Age`; `Date` is never rewritten.
    public var response: HTTPResponse
    /// The body's bytes.
    public var body: HTTPCacheBody
    /// Whether the response was a hit, a miss, revalidated, stale or bypassed the cache.
    public var outcome: HTTPCacheOutcome

    /// Creates a response.
    ///
    /// - Parameters:
    ///   - response: The status and header fields.
    ///   - body: The body.
    ///   - outcome: How it was produced.
    public init(response: HTTPResponse, body: HTTPCacheBody, outcome: HTTPCacheOutcome) {
        self.response = response
        self.body = body
        self.outcome = outcome
    }
}
