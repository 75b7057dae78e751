#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Foundation
import Stash

/// The task delegate of every request the cache sends: it stops `URLSession` from following a
/// redirect, so that the cache sees (and may store) the `3xx` the origin answered for the URL it
/// asked, and records what the caller's delegate decided about that redirect, so that
/// ``RedirectFollower`` follows it through the cache as `URLSession` would have.
///
/// The caller's delegate (the one passed to the call, else the session's) is asked about each
/// redirect and each authentication challenge, as `URLSession` asks it.
final class RedirectHaltingDelegate: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    // @unchecked Sendable: `callerDelegate` is immutable and `Sendable` itself; the decision is
    // behind a lock.

    /// What the caller's delegate answered about a redirect: the request to follow, or `nil` to stop.
    enum Decision { case follow(URLRequest), stop }

    private let callerDelegate: (any URLSessionTaskDelegate)?
    private let decision = LockedValue<Decision?>(nil)

    /// - Parameter callerDelegate: The delegate passed to the call, or `nil` to ask the session's.
    init(callerDelegate: (any URLSessionTaskDelegate)?) {
        self.callerDelegate = callerDelegate
    }

    /// The caller's decision about the redirect of the last request sent, if one was asked.
    func takeDecision() -> Decision? {
        decision.withLock { value in
            defer { value = nil }
            return value
        }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        guard let asked = callerDelegate ?? (session.delegate as? any URLSessionTaskDelegate) else {
            completionHandler(nil)  // no one to ask: RedirectFollower builds the next request itself
            return
        }
        let decision = self.decision
        let decide: @Sendable (URLRequest?) -> Void = { chosen in
            decision.withLock { $0 = chosen.map(Decision.follow) ?? .stop }
            completionHandler(nil)
        }
        #if canImport(Darwin)
        guard asked.responds(to: #selector(URLSessionTaskDelegate.urlSession(_:task:willPerformHTTPRedirection:newRequest:completionHandler:))) else {
            decide(request)
            return
        }
        asked.urlSession?(session, task: task, willPerformHTTPRedirection: response, newRequest: request, completionHandler: decide)
        #else
        asked.urlSession(session, task: task, willPerformHTTPRedirection: response, newRequest: request, completionHandler: decide)
        #endif
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        guard let asked = callerDelegate ?? (session.delegate as? any URLSessionTaskDelegate) else {
            completionHandler(.performDefaultHandling, nil)
            return
        }
        #if canImport(Darwin)
        guard asked.responds(to: #selector(URLSessionTaskDelegate.urlSession(_:task:didReceive:completionHandler:))) else {
            completionHandler(.performDefaultHandling, nil)
            return
        }
        asked.urlSession?(session, task: task, didReceive: challenge, completionHandler: completionHandler)
        #else
        asked.urlSession(session, task: task, didReceive: challenge, completionHandler: completionHandler)
        #endif
    }
}
