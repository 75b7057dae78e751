#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Foundation
import HTTPTypes
import StashHTTP

/// A `URLSession` whose requests go through an RFC 9111 `HTTPCache`: the HTTP cache that
/// `URLCache` was meant to be, on Linux and Apple platforms alike.
///
/// Adopting it is a one-line change: its methods have the names, parameters and return types of
/// `URLSession`'s async methods.
///
/// ```swift
/// let session = try CachingURLSession(cache: HTTPCache(configuration: .init(mode: .private)))
/// let (data, response) = try await session.data(from: URL(string: "https://example.com/")!)
/// print((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Cache-Status") ?? "")  // "Stash; hit"
/// ```
///
/// ## What it does
/// - Each request is answered from the cache when RFC 9111 allows, and otherwise sent through an
///   underlying `URLSession` made from the configuration given, whose `urlCache` is set to `nil`
///   so that two caches never disagree. Stale responses are revalidated with `If-None-Match` or
///   `If-Modified-Since`; `Vary`, `no-store`, `stale-if-error` and invalidation by unsafe methods
///   work as `HTTPCache` documents; concurrent requests for one URL share one origin request.
/// - `URLRequest.cachePolicy` is honoured: `.useProtocolCachePolicy` (RFC 9111),
///   `.reloadIgnoringLocalCacheData` (fetch anew, store the answer), `.reloadRevalidatingCacheData`
///   (always ask the origin, conditionally), `.returnCacheDataElseLoad` (serve any stored response,
///   however stale) and `.returnCacheDataDontLoad` (never ask the origin: a miss is a `504`).
/// - Every response carries `Age` when it comes from the store, and a `Cache-Status` field
///   (RFC 9211) that says how it was produced, such as `Stash; hit` or `Stash; fwd=uri-miss`;
///   ``data(for:delegate:)``'s sibling ``dataWithOutcome(for:delegate:)`` also returns it as an
///   `HTTPCacheOutcome`.
/// - **Redirects** are followed by this session, hop by hop through the cache (at most 20, as
///   `URLSession`), so that a stored `301` or `308` is served from the store as browsers serve it
///   and each URL's answer is stored under that URL. A redirect received from the origin is put to
///   the delegate (`urlSession(_:task:willPerformHTTPRedirection:newRequest:completionHandler:)`)
///   as `URLSession` puts it; a redirect served from the store is followed without asking it,
///   since no task exists for it. To receive every `3xx` instead, pass `followsRedirects: false`.
/// - **Cookies, credentials and authentication challenges** are the underlying session's: its
///   cookie storage adds `Cookie` to and takes `Set-Cookie` from every request sent to the origin,
///   and challenges go to the delegate passed to the call, else the session's. A response served
///   from the store sets no cookie (its `Set-Cookie` was applied when it arrived), and the cache
///   does not vary on `Cookie` unless the origin says `Vary: Cookie`.
///
/// ## Limits
/// Bodies are read whole (as `data(for:)` reads them), also by ``bytes(for:delegate:)``, which
/// returns its own ``AsyncBytes`` since `URLSession.AsyncBytes` cannot be created outside
/// Foundation (and FoundationNetworking on Linux has no `bytes(for:)`). Task delegates are asked about redirects and challenges only; other
/// task events (progress, metrics) concern the underlying requests and go to the session's delegate.
///
/// Thread-safe: share one instance. It never blocks a thread: it suspends while the cache or the
/// origin works.
public final class CachingURLSession: Sendable {
    /// The session that reaches origins, made from the configuration given, with `urlCache` `nil`.
    public let session: URLSession
    /// The cache the responses are stored in.
    public let cache: HTTPCache
    /// Whether `3xx` responses with a `Location` are followed (the default) or returned.
    public let followsRedirects: Bool

    private var follower: RedirectFollower {
        RedirectFollower(cache: cache, session: session, followsRedirects: followsRedirects)
    }

    /// Creates a session whose requests go through `cache`.
    ///
    /// - Parameters:
    ///   - configuration: The underlying session's configuration: timeouts, additional headers,
    ///     cookie and credential storage, protocol classes. Its `urlCache` is set to `nil` and its
    ///     `requestCachePolicy` to `.reloadIgnoringLocalCacheData` on a copy, so that the cache is
    ///     the only one. Defaults to `URLSessionConfiguration.default`.
    ///   - cache: The cache. Its mode is the cache's: a session normally uses a private cache
    ///     (`HTTPCacheMode.private`, the default of `HTTPCache.Configuration`), a gateway a shared one.
    ///     Several sessions may share one cache.
    ///   - delegate: The session's delegate, as `URLSession(configuration:delegate:delegateQueue:)`
    ///     takes it. Defaults to `nil`.
    ///   - delegateQueue: The queue of delegate calls. Defaults to `nil`: a serial queue of its own.
    ///   - followsRedirects: Whether redirects are followed (through the cache). Defaults to `true`.
    /// - Complexity: O(1).
    public init(
        configuration: URLSessionConfiguration = .default,
        cache: HTTPCache,
        delegate: (any URLSessionDelegate)? = nil,
        delegateQueue: OperationQueue? = nil,
        followsRedirects: Bool = true
    ) {
        let configuration = configuration.copy() as! URLSessionConfiguration
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: delegateQueue)
        self.cache = cache
        self.followsRedirects = followsRedirects
    }

    /// Loads `request` through the cache, as `URLSession.data(for:delegate:)` does without one.
    ///
    /// - Parameters:
    ///   - request: The request. Its `cachePolicy` chooses how the cache is used; its URL must be
    ///     `http` or `https`.
    ///   - delegate: Asked about redirects received from the origin and about authentication
    ///     challenges, before the session's delegate. Defaults to `nil`.
    /// - Returns: The body and the `HTTPURLResponse` (with `Cache-Status`, and `Age` when stored).
    /// - Throws: `URLError`, as `URLSession` throws: `.unsupportedURL`, `.httpTooManyRedirects`, or
    ///   the origin's failure (`.cannotConnectToHost`, `.timedOut`, `.networkConnectionLost`, ...)
    ///   when no stale response may be served instead (`stale-if-error`). A response cut short is
    ///   never stored.
    /// - Complexity: A fresh memory hit is O(fields + body) (the body is copied into `Data`) and
    ///   does not suspend for I/O; a miss waits for the origin and reads the body whole. Never
    ///   blocks a thread. Thread-safe.
    public func data(for request: URLRequest, delegate: (any URLSessionTaskDelegate)? = nil) async throws -> (Data, URLResponse) {
        let (data, response, _) = try await dataWithOutcome(for: request, delegate: delegate)
        return (data, response)
    }

    /// Loads `url` through the cache, as `URLSession.data(from:delegate:)` does without one.
    ///
    /// - Parameters:
    ///   - url: An `http` or `https` URL.
    ///   - delegate: As in ``data(for:delegate:)``. Defaults to `nil`.
    /// - Returns: As ``data(for:delegate:)``.
    /// - Throws: As ``data(for:delegate:)``.
    public func data(from url: URL, delegate: (any URLSessionTaskDelegate)? = nil) async throws -> (Data, URLResponse) {
        try await data(for: URLRequest(url: url), delegate: delegate)
    }

    /// Loads `request` through the cache, as `URLSession.bytes(for:delegate:)` does without one
    /// (a method Apple platforms have and FoundationNetworking on Linux does not; this one works on
    /// both), giving the body as an `AsyncSequence` of bytes.
    ///
    /// The body is read whole before this returns, as the cache needs it whole to store it: the
    /// loop over the bytes never waits for the network, and a response that never ends (a stream
    /// of server-sent events) never returns. Use `session`, the underlying `URLSession`, for such
    /// streams: the cache would not store them anyway.
    ///
    /// - Parameters:
    ///   - request: As in ``data(for:delegate:)``.
    ///   - delegate: As in ``data(for:delegate:)``. Defaults to `nil`.
    /// - Returns: The body as ``AsyncBytes`` (not `URLSession.AsyncBytes`, which only Foundation
    ///   can create) and the response, as ``data(for:delegate:)`` returns it.
    /// - Throws: As ``data(for:delegate:)``.
    /// - Complexity: As ``data(for:delegate:)``. Never blocks a thread. Thread-safe.
    public func bytes(for request: URLRequest, delegate: (any URLSessionTaskDelegate)? = nil) async throws -> (AsyncBytes, URLResponse) {
        let (data, response) = try await data(for: request, delegate: delegate)
        return (AsyncBytes(data), response)
    }

    /// Loads `url` through the cache, as `URLSession.bytes(from:delegate:)` does without one.
    ///
    /// - Parameters:
    ///   - url: An `http` or `https` URL.
    ///   - delegate: As in ``data(for:delegate:)``. Defaults to `nil`.
    /// - Returns: As ``bytes(for:delegate:)``.
    /// - Throws: As ``data(for:delegate:)``.
    public func bytes(from url: URL, delegate: (any URLSessionTaskDelegate)? = nil) async throws -> (AsyncBytes, URLResponse) {
        try await bytes(for: URLRequest(url: url), delegate: delegate)
    }

    /// Loads `request` through the cache and says how the response was produced.
    ///
    /// - Parameters:
    ///   - request: As in ``data(for:delegate:)``.
    ///   - delegate: As in ``data(for:delegate:)``. Defaults to `nil`.
    /// - Returns: The body, the response and the outcome of its last hop (`HTTPCacheOutcome.hit`,
    ///   `HTTPCacheOutcome.miss`, ...).
    /// - Throws: As ``data(for:delegate:)``.
    public func dataWithOutcome(
        for request: URLRequest, delegate: (any URLSessionTaskDelegate)? = nil
    ) async throws -> (data: Data, response: URLResponse, outcome: HTTPCacheOutcome) {
        let (answer, data, url) = try await follower.response(for: request, body: .none, delegate: delegate)
        return (data, try HTTPURLResponse.converting(answer.response, url: url), answer.outcome)
    }

    /// Uploads `bodyData` with `request`, as `URLSession.upload(for:from:delegate:)` does. An
    /// unsafe method (`POST`, `PUT`, `DELETE`, ...) is never answered from the cache and, when it
    /// succeeds, removes what the cache holds for its URL (RFC 9111 §4.4).
    ///
    /// - Parameters:
    ///   - request: The request; its `httpBody` is ignored.
    ///   - bodyData: The body sent.
    ///   - delegate: As in ``data(for:delegate:)``. Defaults to `nil`.
    /// - Returns: As ``data(for:delegate:)``.
    /// - Throws: As ``data(for:delegate:)``.
    public func upload(
        for request: URLRequest, from bodyData: Data, delegate: (any URLSessionTaskDelegate)? = nil
    ) async throws -> (Data, URLResponse) {
        let (answer, data, url) = try await follower.response(for: request, body: .data(bodyData), delegate: delegate)
        return (data, try HTTPURLResponse.converting(answer.response, url: url))
    }

    /// Uploads the file at `fileURL` with `request`, as `URLSession.upload(for:fromFile:delegate:)`
    /// does (the file is streamed by `URLSession`, not read here). As ``upload(for:from:delegate:)``
    /// otherwise.
    ///
    /// - Parameters:
    ///   - request: The request; its `httpBody` is ignored.
    ///   - fileURL: The file whose bytes are the body.
    ///   - delegate: As in ``data(for:delegate:)``. Defaults to `nil`.
    /// - Returns: As ``data(for:delegate:)``.
    /// - Throws: As ``data(for:delegate:)``.
    public func upload(
        for request: URLRequest, fromFile fileURL: URL, delegate: (any URLSessionTaskDelegate)? = nil
    ) async throws -> (Data, URLResponse) {
        let (answer, data, url) = try await follower.response(for: request, body: .file(fileURL), delegate: delegate)
        return (data, try HTTPURLResponse.converting(answer.response, url: url))
    }

    /// Loads `request` through the cache into a file, as `URLSession.download(for:delegate:)`
    /// does: the body is written to a new file in the temporary directory, which the caller moves
    /// or deletes.
    ///
    /// - Parameters:
    ///   - request: As in ``data(for:delegate:)``.
    ///   - delegate: As in ``data(for:delegate:)``. Defaults to `nil`.
    /// - Returns: The file's URL and the response.
    /// - Throws: As ``data(for:delegate:)``, and `URLError(.cannotWriteToFile)` when the file
    ///   cannot be written.
    /// - Complexity: Holds the body in memory while it is written (the cache reads bodies whole).
    public func download(for request: URLRequest, delegate: (any URLSessionTaskDelegate)? = nil) async throws -> (URL, URLResponse) {
        let (data, response) = try await data(for: request, delegate: delegate)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("StashDownload-\(UUID().uuidString).tmp")
        do {
            try data.write(to: file)
        } catch {
            throw URLError(.cannotWriteToFile, userInfo: [NSURLErrorFailingURLErrorKey: file, NSUnderlyingErrorKey: error])
        }
        return (file, response)
    }

    /// Loads `url` through the cache into a file, as `URLSession.download(from:delegate:)` does.
    ///
    /// - Parameters:
    ///   - url: An `http` or `https` URL.
    ///   - delegate: As in ``data(for:delegate:)``. Defaults to `nil`.
    /// - Returns: As ``download(for:delegate:)``.
    /// - Throws: As ``download(for:delegate:)``.
    public func download(from url: URL, delegate: (any URLSessionTaskDelegate)? = nil) async throws -> (URL, URLResponse) {
        try await download(for: URLRequest(url: url), delegate: delegate)
    }

    /// Cancels the underlying session's tasks and invalidates it, as
    /// `URLSession.invalidateAndCancel()`; the cache stays open (close it with `HTTPCache.close()`
    /// when nothing else uses it).
    public func invalidateAndCancel() {
        session.invalidateAndCancel()
    }

    /// Lets the underlying session's tasks finish, then invalidates it, as
    /// `URLSession.finishTasksAndInvalidate()`; the cache stays open.
    public func finishTasksAndInvalidate() {
        session.finishTasksAndInvalidate()
    }
}
