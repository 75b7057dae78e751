#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Foundation
import HTTPTypes
import Stash
import StashHTTP

/// Sends one `URLRequest` through an `HTTPCache`, following redirects hop by hop so that each
/// hop is a request of its own to the cache: a stored `301` or `308`, or a fresh `302`, is served
/// from the store as a browser's cache serves it, and what each URL answered is stored under that
/// URL (a redirect followed inside `URLSession` would store the last answer under the first URL).
///
/// What ``CachingURLSession`` and ``StashURLProtocol`` share.
struct RedirectFollower: Sendable {
    /// The most redirects followed for one request, as `URLSession`'s (20); one more is
    /// `URLError(.httpTooManyRedirects)`.
    static let maximumRedirects = 20

    let cache: HTTPCache
    /// The session that reaches origins: its `urlCache` is `nil`.
    let session: URLSession
    /// Whether `3xx` answers with a `Location` are followed; `false` returns them.
    let followsRedirects: Bool

    /// What the caller sends with the request.
    enum Body: Sendable {
        case none
        case data(Data)
        case file(URL)
    }

    /// The cache's answer to `request` after every redirect, with its body read whole, and the URL
    /// it answers for.
    ///
    /// - Parameters:
    ///   - request: The caller's request; its `cachePolicy` chooses the `HTTPCachePolicy`.
    ///   - body: The request's body (`request.httpBody` is used when this is `.none`).
    ///   - delegate: The caller's task delegate, asked about redirects received from the origin
    ///     and about authentication challenges; `nil` asks the session's delegate.
    /// - Throws: `URLError`, as `URLSession` throws: `.unsupportedURL` for a URL that is not
    ///   `http` or `https`, `.httpTooManyRedirects`, or the origin's failure when no stale
    ///   response may be served instead.
    func response(
        for request: URLRequest, body: Body, delegate: (any URLSessionTaskDelegate)?
    ) async throws -> (response: HTTPCacheResponse, data: Data, url: URL) {
        var current = request
        var body = body
        if case .none = body, let data = request.httpBody { body = .data(data) }
        let halting = RedirectHaltingDelegate(callerDelegate: delegate)
        for _ in 0...Self.maximumRedirects {
            guard let url = current.url,
                  let head = current.cacheRequest(additionalHeaders: session.configuration.httpAdditionalHeaders)
            else { throw URLError(.unsupportedURL, userInfo: current.url.map { [NSURLErrorFailingURLErrorKey: $0] } ?? [:]) }
            let sent = current
            let sentBody = body
            let answer = try await cache.responseWithCacheStatus(for: head, policy: HTTPCachePolicy(current.cachePolicy)) {
                request, _ in
                try await Self.fetch(request, as: sent, body: sentBody, session: session, delegate: halting)
            }
            let decision = halting.takeDecision()
            guard followsRedirects, let next = Self.redirect(of: current, by: answer.response, at: url, decision: decision) else {
                let data = try await Data(answer.body.collect(upTo: .max))
                return (answer, data, url)
            }
            if next.httpMethod != current.httpMethod, next.httpMethod == "GET" { body = .none }
            current = next
        }
        throw URLError(.httpTooManyRedirects, userInfo: current.url.map { [NSURLErrorFailingURLErrorKey: $0] } ?? [:])
    }

    /// Sends `request` (the cache's version of `original`) to the origin through `session`, with
    /// redirects stopped by `delegate`.
    private static func fetch(
        _ request: HTTPRequest, as original: URLRequest, body: Body, session: URLSession, delegate: RedirectHaltingDelegate
    ) async throws -> (HTTPResponse, HTTPCacheBody) {
        guard var sent = original.sending(request) else { throw URLError(.unsupportedURL) }
        sent.httpBody = nil
        let (data, response) = try await send(sent, body: body, session: session, delegate: delegate)
        guard let http = response as? HTTPURLResponse, let head = http.httpResponse else {
            throw URLError(.badServerResponse, userInfo: sent.url.map { [NSURLErrorFailingURLErrorKey: $0] } ?? [:])
        }
        return (head, HTTPCacheBody(bytes: [UInt8](data)))
    }

    /// Runs one task of `session` for `request` with `delegate` as its own delegate, and waits for it.
    ///
    /// The task is made and given its delegate here, rather than through
    /// `URLSession.data(for:delegate:)`: FoundationNetworking keeps the delegate passed there for
    /// the task's data only, and asks `task.delegate` (the session's) about redirects.
    private static func send(
        _ request: URLRequest, body: Body, session: URLSession, delegate: RedirectHaltingDelegate
    ) async throws -> (Data, URLResponse) {
        let running = LockedValue<URLSessionTask?>(nil)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let completion: @Sendable (Data?, URLResponse?, (any Error)?) -> Void = { data, response, error in
                    if let response, error == nil {
                        continuation.resume(returning: (data ?? Data(), response))
                    } else {
                        continuation.resume(throwing: error ?? URLError(.badServerResponse))
                    }
                }
                let task = switch body {
                case .none: session.dataTask(with: request, completionHandler: completion)
                case .data(let bytes): session.uploadTask(with: request, from: bytes, completionHandler: completion)
                case .file(let file): session.uploadTask(with: request, fromFile: file, completionHandler: completion)
                }
                task.delegate = delegate
                running.withLock { $0 = task }
                task.resume()
                if Task.isCancelled { task.cancel() }
            }
        } onCancel: {
            running.withLock { $0 }?.cancel()
        }
    }

    /// The request that follows `response` to `request` (answered for `url`), or `nil` when it is
    /// not a redirect to follow or the caller's delegate stopped it.
    ///
    /// Follows as `URLSession` does: `301` and `302` turn a `POST` into a `GET` without a body,
    /// `303` turns every method but `HEAD` into a `GET`, `307` and `308` keep the method and the
    /// body; `Location` may be relative to `url`.
    static func redirect(of request: URLRequest, by response: HTTPResponse, at url: URL, decision: RedirectHaltingDelegate.Decision?) -> URLRequest? {
        switch decision {
        case .stop: return nil
        case .follow(let chosen): return chosen
        case nil: break
        }
        guard [301, 302, 303, 307, 308].contains(response.status.code),
              let location = response.headerFields[.location],
              let target = URL(string: location, relativeTo: url)?.absoluteURL
        else { return nil }
        var next = request
        next.url = target
        let method = request.httpMethod ?? "GET"
        if response.status.code == 303 && method != "HEAD" || (response.status.code == 301 || response.status.code == 302) && method == "POST" {
            next.httpMethod = "GET"
            next.httpBody = nil
            next.setValue(nil, forHTTPHeaderField: "Content-Type")
            next.setValue(nil, forHTTPHeaderField: "Content-Length")
        }
        return next
    }
}
