import HTTPTypes
import Stash

/// An HTTP response cache with RFC 9111 semantics, on Stash's tiers: memory, disk, and a
/// remote tier (Redis) that a fleet of caches shares.
///
/// Give it each request and a closure that asks the origin; it answers from the
/// store when RFC 9111 (and the request's ``HTTPCachePolicy``) allows, asks the
/// origin otherwise (conditionally when it holds a validator), and stores what
/// may be stored.
///
/// ```swift
/// let cache = try HTTPCache(configuration: .init(mode: .private))
/// let result = try await cache.response(for: request) { request, body in
///     try await client.send(request, body)   // your HTTP client
/// }
/// print(result.outcome)   // hit, miss, revalidated, stale or bypass
/// ```
///
/// ## What is stored
/// Responses to GET and HEAD that RFC 9111 §3 lets a cache store, with the
/// chosen ``HTTPCacheMode``'s rules, whose body arrived whole and is at most
/// ``Configuration/maximumEntrySize``. Keys are the method and the normalised
/// URL (scheme, authority, path and query), with the `Vary` variants under it.
/// See the "HTTP caching" article for every rule and the choices made where the
/// RFC leaves room.
///
/// ## Where it is stored
/// In a `Cache` (the `Stash` module's) of ``HTTPCacheEntry`` values: a memory tier, a disk tier when
/// ``Configuration/directory`` is set, and ``Configuration/remote`` when it is set, with
/// `Cache`'s rules between them (a disk hit is promoted into memory; a write goes to disk, then
/// memory, then the remote tier; a write the disk refuses leaves the key in no tier and is logged,
/// once per incident).
///
/// ## Thread safety
/// Every member may be called from any task. Concurrent misses and
/// revalidations of one key share a single origin request: the first caller
/// asks the origin, the others wait for it and are answered from the store (or
/// ask the origin themselves when its response could not serve them).
public final class HTTPCache: Sendable {
    let engine: HTTPCacheEngine

    /// Creates a cache, opening its disk tier when ``Configuration/directory`` is set.
    ///
    /// - Parameter configuration: The settings. Defaults to a private, memory-only cache.
    /// - Throws: `StashError`: the disk tier's errors (`StashError.Code.directoryUnusable`, ...).
    ///   A setting out of range (a negative limit or duration, fewer than one variant per URL)
    ///   is not refused: it is clamped to the nearest valid value, with a warning logged, as
    ///   every cache of Stash does.
    /// - Complexity: O(1). Blocks on disk I/O when opening the disk tier.
    public init(configuration: Configuration = Configuration()) throws(StashError) {
        engine = try HTTPCacheEngine(configuration: configuration)
    }

    /// The configuration given at initialisation, with any value out of range clamped.
    public var configuration: Configuration { engine.configuration }

    /// Answers `request` from the store or through `origin`, storing what RFC 9111 allows.
    ///
    /// `origin` is called at most once per call, and not at all on a fresh hit;
    /// concurrent misses and revalidations for one key share one origin call. A
    /// stored response carries `Age` (and `Cache-Status` when configured); `Date` is
    /// never rewritten. When the request is conditional and the stored response
    /// satisfies it, the answer is a `304 Not Modified`.
    ///
    /// - Parameters:
    ///   - request: The request. Its scheme, authority, path and query make the key.
    ///   - body: The request's body, passed to `origin` (used by unsafe methods). Defaults to `nil`.
    ///   - policy: How this request uses the cache. Defaults to ``HTTPCachePolicy/useProtocolPolicy``.
    ///   - origin: Sends a request to the origin and returns its response and body; throws when the
    ///     origin cannot be reached or times out.
    /// - Returns: The response, its body and how it was produced. An `only-if-cached` or
    ///   ``HTTPCachePolicy/returnStoredDontLoad`` miss is a `504 Gateway Timeout` with outcome ``HTTPCacheOutcome/miss``.
    /// - Throws: What `origin` throws, unless a stale response may be served instead (`stale-if-error`).
    /// - Complexity: A fresh memory hit is O(fields) and does not block or suspend; a disk hit blocks
    ///   on disk I/O off the cooperative pool; a miss waits for the origin and, for a stored body,
    ///   reads it whole.
    public func response(
        for request: HTTPRequest,
        body: HTTPCacheBody? = nil,
        policy: HTTPCachePolicy = .useProtocolPolicy,
        origin: @escaping @Sendable (HTTPRequest, HTTPCacheBody?) async throws -> (HTTPResponse, HTTPCacheBody)
    ) async throws -> HTTPCacheResponse {
        try await engine.response(for: request, body: body, policy: policy, origin: origin)
    }

    /// ``response(for:body:policy:origin:)`` for an adapter, whose responses always say how they
    /// were produced: `Cache-Status` is added whether or not the configuration asks for it (and
    /// once only when it does).
    ///
    /// - Parameter revalidatesInBackground: `false` for an `origin` that must not be called once
    ///   this returns (a server middleware's `next`): a response within `stale-while-revalidate`
    ///   is then revalidated before the answer instead of after it. Defaults to `true`.
    package func responseWithCacheStatus(
        for request: HTTPRequest,
        body: HTTPCacheBody? = nil,
        policy: HTTPCachePolicy,
        revalidatesInBackground: Bool = true,
        origin: @escaping @Sendable (HTTPRequest, HTTPCacheBody?) async throws -> (HTTPResponse, HTTPCacheBody)
    ) async throws -> HTTPCacheResponse {
        let answer = try await engine.response(
            for: request, body: body, policy: policy, revalidatesInBackground: revalidatesInBackground, origin: origin)
        return engine.configuration.addsCacheStatus ? answer : engine.addingCacheStatus(to: answer)
    }

    /// The answer to `request` under ``HTTPCachePolicy/useProtocolPolicy`` when memory holds a
    /// fresh response for it (the response, a `304` to its conditions, or the `206` or `416` of its
    /// `Range`), with `Cache-Status`, made without suspending (for an adapter that
    /// would otherwise leave its event loop for a task); `nil` otherwise, and then
    /// ``responseWithCacheStatus(for:body:policy:revalidatesInBackground:origin:)`` answers.
    ///
    /// - Complexity: O(fields). Never blocks or suspends. Thread-safe.
    package func freshResponseWithCacheStatus(for request: HTTPRequest) -> HTTPCacheResponse? {
        guard let answer = engine.freshAnswerInMemory(for: request) else { return nil }
        return engine.configuration.addsCacheStatus ? answer : engine.addingCacheStatus(to: answer)
    }

    /// Removes every stored response from every tier (a remote tier's namespace included).
    ///
    /// - Throws: `StashError` when the disk tier fails.
    /// - Complexity: O(n). Blocks on disk I/O off the cooperative pool.
    public func removeAll() async throws {
        try await engine.removeAll()
    }

    /// Removes the stored responses (every variant, GET and HEAD) for one URL.
    ///
    /// - Parameter request: A request for the URL; its method and fields are ignored.
    /// - Throws: `StashError` when the disk tier fails.
    /// - Complexity: O(1) plus a disk transaction. Thread-safe.
    public func removeResponses(for request: HTTPRequest) async throws {
        try await engine.invalidate(scheme: request.scheme, authority: request.authority, path: request.path ?? "/")
    }

    /// The cache's counters, in the form every Stash cache reports (so `StashMetrics`'
    /// `CacheMetrics` exports them), counted per response:
    /// - `CacheStatistics.hits`: responses served from the store without asking the origin
    ///   (outcomes ``HTTPCacheOutcome/hit`` and ``HTTPCacheOutcome/stale``);
    /// - `CacheStatistics.misses`: responses for which the cache asked the origin
    ///   (``HTTPCacheOutcome/miss`` and ``HTTPCacheOutcome/revalidated``); a request that
    ///   bypasses the cache (``HTTPCacheOutcome/bypass``) is neither;
    /// - `CacheStatistics.staleValuesServed`: the ``HTTPCacheOutcome/stale`` responses, also
    ///   counted in `hits`;
    /// - `CacheStatistics.evictions`: its memory and disk tiers' evictions, added up (a remote
    ///   tier evicts unseen).
    ///
    /// The load counters stay 0.
    ///
    /// - Complexity: O(1). Never blocks on disk I/O. Thread-safe.
    public var statistics: CacheStatistics { engine.statistics }

    /// Writes pending state and closes the disk tier, without waiting for background work (the
    /// `async` form waits). Later calls still answer from memory and the origin, without the disk
    /// tier; with a disk tier they store nothing more (a write goes to disk first). Background
    /// revalidations under way (`stale-while-revalidate`) and changes on their way to a remote
    /// tier go on; what reaches the closed disk tier fails, unlogged. The remote tier's client is
    /// not closed.
    ///
    /// - Complexity: Blocks on disk I/O.
    public func close() {
        engine.close()
    }

    /// ``close(timeout:)`` with a timeout of 10 seconds.
    ///
    /// - Complexity: As ``close(timeout:)``.
    public func close() async {
        await close(timeout: .seconds(10))
    }

    /// Waits for the background revalidations under way (`stale-while-revalidate`), then for the
    /// store's changes on their way to a remote tier, then writes pending state and closes the
    /// disk tier: what a server calls on shutdown, so that no revalidation is cut off or finds the
    /// disk closed. In a swift-service-lifecycle `ServiceGroup` the cache calls `close() async`
    /// itself on graceful shutdown; list the remote tier's client before the cache, so that it
    /// stops after it.
    ///
    /// Each wait ends after `timeout` on the cache's clock, or when the calling task is cancelled:
    /// a revalidation runs its origin (behind a server's responder, the app's own route), which
    /// may have no timeout of its own. What is still running is then logged (a warning); it goes
    /// on, and what it stores after the close reaches memory only, or nothing with a disk tier.
    /// Later calls behave as after the synchronous `close()`.
    ///
    /// - Parameter timeout: The longest wait for the revalidations, and then for the remote
    ///   changes.
    /// - Complexity: Suspends until the background work ends or the timeouts pass; the disk tier's
    ///   close blocks a thread of its queue on disk I/O.
    public func close(timeout: Duration) async {
        await engine.waitForBackgroundRevalidations(timeout: timeout)
        await engine.close(timeout: timeout)
    }
}
