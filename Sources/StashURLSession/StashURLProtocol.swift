#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Foundation
import Stash
import StashHTTP

/// A `URLProtocol` that answers `http` and `https` requests through an `HTTPCache`: for code
/// whose `URLSession` calls cannot change, only its configuration.
///
/// ```swift
/// StashURLProtocol.cache = try HTTPCache(configuration: .init(mode: .private, directory: path))
/// let configuration = URLSessionConfiguration.default
/// configuration.protocolClasses = [StashURLProtocol.self] + (configuration.protocolClasses ?? [])
/// configuration.urlCache = nil
/// let session = URLSession(configuration: configuration)   // every request now goes through the cache
/// ```
///
/// Each request runs as ``CachingURLSession`` runs it (the same rules, `cachePolicy`, `Cache-Status`),
/// its origin requests sent by a session of its own ( ``originSession``).
///
/// ## On Linux (FoundationNetworking)
/// - Put it **first** in `URLSessionConfiguration.protocolClasses`: a protocol registered with
///   `URLProtocol.registerClass(_:)` is appended after the built-in HTTP protocol there, so it is
///   never chosen.
/// - Redirects are followed inside the protocol, through the cache, and the session receives the
///   last response: FoundationNetworking stops the process (`fatalError`) when a custom protocol
///   reports a redirect, so the session's delegate is not asked about redirects.
/// - The body is delivered in one piece once it has arrived whole: FoundationNetworking gives a
///   completion handler or `data(for:)` only the last of several chunks.
///
/// On Apple platforms the same code runs; redirects are followed inside the protocol there too, so
/// that the two platforms behave alike.
///
/// Thread-safe: `URLSession` creates one instance per request; ``cache`` may be replaced at any time
/// (requests under way keep the cache they started with).
public final class StashURLProtocol: URLProtocol {
    // Sendable as Foundation declares URLProtocol: its own mutable state, the load under way, is
    // behind a lock.

    private static let shared = LockedValue<(cache: HTTPCache, session: URLSession)?>(nil)

    /// The property set on the requests this protocol sends to the origin, so that it never
    /// answers them itself (where it is registered globally, as on Apple platforms).
    private static let handledKey = "Stash.StashURLProtocol.handled"

    /// The cache every instance answers through. Defaults to a private, memory-only cache
    /// (`HTTPCache(configuration: .init())`), created on first use. Set it before the first
    /// request to use another (a disk tier, a shared mode, other limits).
    ///
    /// - Complexity: O(1); takes a lock. Thread-safe.
    public static var cache: HTTPCache {
        get { resources.cache }
        set { shared.withLock { $0 = (newValue, $0?.session ?? makeOriginSession()) } }
    }

    /// The session that sends this protocol's requests to origins: `URLSessionConfiguration.default`
    /// with `urlCache` `nil`, and this protocol's requests marked so that it does not answer them again.
    public static var originSession: URLSession { resources.session }

    private static var resources: (cache: HTTPCache, session: URLSession) {
        shared.withLock { value in
            if let value { return value }
            // A default configuration is valid: HTTPCache's initialiser throws only for a disk tier.
            let made = (cache: try! HTTPCache(configuration: .init()), session: makeOriginSession())
            value = made
            return made
        }
    }

    private static func makeOriginSession() -> URLSession {
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return URLSession(configuration: configuration)
    }

    private let load = LockedValue<Task<Void, Never>?>(nil)

    /// Whether this protocol answers `request`: an `http` or `https` URL it did not send itself.
    public override class func canInit(with request: URLRequest) -> Bool {
        guard let scheme = request.url?.scheme?.lowercased(), scheme == "http" || scheme == "https" else { return false }
        return property(forKey: handledKey, in: request) == nil
    }

    /// `request` unchanged: the cache normalises its keys itself.
    public override class func canonicalRequest(for request: URLRequest) -> URLRequest {
        request
    }

    /// Starts answering the request through ``cache``.
    public override func startLoading() {
        let (cache, session) = Self.resources
        var marked = request
        if let mutable = (request as NSURLRequest).mutableCopy() as? NSMutableURLRequest {
            URLProtocol.setProperty(true, forKey: Self.handledKey, in: mutable)
            marked = mutable as URLRequest
        }
        let follower = RedirectFollower(cache: cache, session: session, followsRedirects: true)
        let delivery = Delivery(owner: self, client: client)
        let task = Task {
            do {
                let (answer, data, url) = try await follower.response(for: marked, body: .none, delegate: nil)
                let response = try HTTPURLResponse.converting(answer.response, url: url)
                guard !Task.isCancelled else { return }
                delivery.client?.urlProtocol(delivery.owner, didReceive: response, cacheStoragePolicy: .notAllowed)
                if !data.isEmpty { delivery.client?.urlProtocol(delivery.owner, didLoad: data) }
                delivery.client?.urlProtocolDidFinishLoading(delivery.owner)
            } catch {
                guard !Task.isCancelled else { return }
                delivery.client?.urlProtocol(delivery.owner, didFailWithError: error)
            }
        }
        load.withLock { $0 = task }
    }

    /// Where a load's answer goes: the protocol instance and its client.
    private struct Delivery: @unchecked Sendable {
        // @unchecked Sendable: Foundation calls a URLProtocol's client from any thread (a
        // protocol's work runs on threads of its own choosing), and the task that uses this is the
        // only user of `owner` after `startLoading()` returns, apart from `stopLoading()`, which
        // touches only the lock-protected `load`.
        let owner: URLProtocol
        let client: (any URLProtocolClient)?
    }

    /// Cancels the request under way.
    public override func stopLoading() {
        load.withLock { $0 }?.cancel()
    }
}
