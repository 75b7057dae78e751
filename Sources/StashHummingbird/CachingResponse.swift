#if Hummingbird
import Hummingbird
import HTTPTypes
import StashHTTP

/// What ``HTTPCacheMiddleware`` and ``HTTPCacheResponder`` share: one request answered through an
/// `HTTPCache`, the route run as the origin.
enum CachingResponse {
    /// The longest body a GET or HEAD request may carry (it is read before the route runs).
    static let maximumBodyOfCachedMethods = 1 << 20

    /// The cache's answer to `request`, running `route` when the cache needs the origin.
    ///
    /// - Parameters:
    ///   - revalidatesInBackground: Whether `route` may run after the answer is returned (a
    ///     background revalidation within `stale-while-revalidate`).
    ///   - keepsStoredDate: Whether the answer's `Date` is also sent in the field that
    ///     ``StoredDateChannelHandler`` moves back into `Date` after Hummingbird overwrites it.
    ///   - route: Runs the route for a request: the caller's, or the cache's with validators added.
    static func respond<Context: RequestContext>(
        to request: Request,
        context: Context,
        cache: HTTPCache,
        revalidatesInBackground: Bool,
        keepsStoredDate: Bool,
        route: @escaping @Sendable (Request, Context) async throws -> Response
    ) async throws -> Response {
        var head = request.head
        // A server's request has no scheme (HTTP/1.1 puts its Host field in the authority): the key needs both.
        if head.scheme == nil { head.scheme = "http" }
        if head.authority == nil { head.authority = "localhost" }
        // With background revalidation the route may run twice for a GET or HEAD (once more after
        // the answer), and a request's streamed body can be read once: read it here (such bodies
        // are rare and small). Otherwise the route runs at most once, with the body as it streams.
        let body = revalidatesInBackground && (head.method == .get || head.method == .head)
            ? RequestBody(buffer: try await request.body.collect(upTo: Self.maximumBodyOfCachedMethods))
            : request.body
        let answer = try await cache.responseWithCacheStatus(
            for: head, policy: .useProtocolPolicy, revalidatesInBackground: revalidatesInBackground
        ) { sent, _ in
            let response = try await route(Request(head: sent, body: body), context)
            return (response.head, HTTPCacheBody(response.body))
        }
        let contentLength = answer.response.headerFields[.contentLength].flatMap { Int($0) }
        var fields = answer.response.headerFields
        if keepsStoredDate, let date = fields[.date] { fields[StoredDateChannelHandler.storedDate] = date }
        return Response(
            status: answer.response.status, headers: fields,
            body: ResponseBody(answer.body, contentLength: contentLength))
    }
}
#endif  // Hummingbird
