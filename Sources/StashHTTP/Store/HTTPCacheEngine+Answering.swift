#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import Logging
import Stash

/// Answering a request: from the store when the rules allow, else through the origin (one
/// request per key at a time), and serving a stored response (`Age`, conditions, ranges).
extension HTTPCacheEngine {
    /// - Parameter revalidatesInBackground: Whether a response within `stale-while-revalidate` is
    ///   served at once and revalidated by a background call of `origin`; `false` revalidates it
    ///   before answering, for an `origin` that may not be called once the answer is returned (a
    ///   server middleware's `next`).
    func response(
        for request: HTTPRequest, body: HTTPCacheBody?, policy: HTTPCachePolicy, revalidatesInBackground: Bool = true,
        origin: @escaping @Sendable (HTTPRequest, HTTPCacheBody?) async throws -> (HTTPResponse, HTTPCacheBody)
    ) async throws -> HTTPCacheResponse {
        let requestCC = HTTPCacheRules.requestCacheControl(request)
        let onlyIfCached = requestCC.contains("only-if-cached") || policy.kind == .returnStoredDontLoad
        if request.method == .get, request.headerFields[.range] != nil, policy.kind != .noStore,
           let answer = await storedRangeAnswer(for: request, policy: policy, onlyIfCached: onlyIfCached) {
            return answer
        }
        // A HEAD ignores `Range` (RFC 9110 §14.2): it is answered as any HEAD.
        let usesStore = policy.kind != .noStore
            && (request.method == .head || request.method == .get && request.headerFields[.range] == nil)
        guard usesStore else {
            let (response, responseBody) = try await origin(request, body)
            let targets = HTTPCacheRules.invalidatedTargets(request: request, response: response)
            for (scheme, authority, path) in targets {
                try? await invalidate(scheme: scheme, authority: authority, path: path)
            }
            return finish(HTTPCacheResponse(response: response, body: responseBody, outcome: .bypass))
        }
        let key = Self.key(for: request)
        var waited = false
        while true {
            let now = clock.nanosecondsNow
            let stored = await storedVariant(forKey: key, request: request)
            var action = Action.fetch
            if let stored {
                switch policy.kind {
                case .returnStoredElseLoad, .returnStoredDontLoad:
                    let fresh = rules.decision(for: request, stored: stored, now: now) == .fresh
                    return serve(stored, for: request, now: now, outcome: fresh ? .hit : .stale)
                case .reload:
                    action = .fetch
                case .revalidate:
                    action = .validate(stored)
                case .useProtocolPolicy, .noStore:
                    switch rules.decision(for: request, stored: stored, now: now) {
                    case .fresh:
                        return serve(stored, for: request, now: now, outcome: .hit)
                    case .staleAllowed:
                        return serve(stored, for: request, now: now, outcome: .stale)
                    case .staleWhileRevalidate where revalidatesInBackground:
                        if onlyIfCached { return gatewayTimeout() }
                        revalidateInBackground(key: key, request: request, stored: stored, origin: origin)
                        return serve(stored, for: request, now: now, outcome: .stale)
                    case .staleWhileRevalidate:
                        action = .validate(stored)
                    case .validate:
                        action = .validate(stored)
                    }
                }
            }
            if request.method == .head,
               let answer = await storedGetAnswer(for: request, policy: policy, now: now) {
                return answer
            }
            if onlyIfCached { return gatewayTimeout() }
            // One origin request per key at a time: wait for one under way, then look again.
            let gate = FetchGate()
            let existing = state.withLock { state -> FetchGate? in
                if let existing = state.inFlight[key] { return existing }
                state.inFlight[key] = gate
                return nil
            }
            if let existing, !waited {
                await existing.wait()
                // A caller cancelled while it waited gives up rather than asking the origin itself.
                try Task.checkCancellation()
                waited = true
                continue
            }
            defer {
                if existing == nil {
                    state.withLock { state in if state.inFlight[key] === gate { state.inFlight[key] = nil } }
                    gate.open()
                }
            }
            switch action {
            case .fetch:
                return try await fetch(request: request, body: body, key: key, policy: policy, origin: origin)
            case .validate(let stored):
                return try await validate(request: request, key: key, stored: stored, policy: policy, origin: origin)
            }
        }
    }

    /// The answer to a GET with `Range` from the stored response when it may be used as it is
    /// (fresh, stale where allowed, or any for ``HTTPCachePolicy/returnStoredElseLoad`` and
    /// ``HTTPCachePolicy/returnStoredDontLoad``): the part asked for, a `416`, a `304`, or the
    /// whole response (see ``serve(_:for:now:outcome:)``).
    ///
    /// `nil` otherwise, and the request goes to the origin as it is, uncached: nothing stored, a
    /// response that would need validating first (the origin's answer to a `Range` request is a
    /// part, which the cache does not store), one that does not serve ranges
    /// (``HTTPCacheRules/servesRanges(from:)``), or a request with preconditions only the origin
    /// evaluates (``HTTPCacheRules/hasOriginPreconditions(_:)``). When the request may not reach
    /// the origin (`only-if-cached`, ``HTTPCachePolicy/returnStoredDontLoad``), a usable stored
    /// response is served whole instead of going there, and a `504` answers when there is none.
    func storedRangeAnswer(for request: HTTPRequest, policy: HTTPCachePolicy, onlyIfCached: Bool) async -> HTTPCacheResponse? {
        let readsStore = onlyIfCached || policy.kind == .useProtocolPolicy || policy.kind == .returnStoredElseLoad
        if readsStore, onlyIfCached || !HTTPCacheRules.hasOriginPreconditions(request),
           let stored = await storedVariant(forKey: Self.key(for: request), request: request),
           onlyIfCached || HTTPCacheRules.servesRanges(from: stored) {
            let now = clock.nanosecondsNow
            let decision = rules.decision(for: request, stored: stored, now: now)
            let outcome: HTTPCacheOutcome? = switch policy.kind {
            case .returnStoredElseLoad, .returnStoredDontLoad: decision == .fresh ? .hit : .stale
            case .useProtocolPolicy where decision == .fresh: .hit
            case .useProtocolPolicy where decision == .staleAllowed: .stale
            default: nil
            }
            if let outcome {
                // With preconditions only the origin evaluates, the part is not sent: the whole.
                let request = HTTPCacheRules.hasOriginPreconditions(request) ? Self.withoutRange(request) : request
                return serve(stored, for: request, now: now, outcome: outcome)
            }
        }
        return onlyIfCached ? gatewayTimeout() : nil
    }

    /// `request` without its `Range`.
    static func withoutRange(_ request: HTTPRequest) -> HTTPRequest {
        var request = request
        request.headerFields[.range] = nil
        return request
    }

    private enum Action {
        case fetch
        case validate(StoredResponse)
    }

    /// The key of the stored GET responses for `request`'s URL.
    static func getKey(for request: HTTPRequest) -> String {
        key(method: .get, scheme: request.scheme, authority: request.authority, path: request.path)
    }

    /// A HEAD request answered by the stored GET response, without its body, when the rules let
    /// it answer as it is (RFC 9111 §4); `nil` otherwise.
    func storedGetAnswer(for request: HTTPRequest, policy: HTTPCachePolicy, now: Int64) async -> HTTPCacheResponse? {
        guard let storedGet = await storedVariant(forKey: Self.getKey(for: request), request: request),
              let outcome = rules.headAnswer(from: storedGet, for: request, policy: policy, now: now)
        else { return nil }
        return serve(storedGet, for: request, now: now, outcome: outcome)
    }

    /// Applies a `200` response to HEAD to the stored GET response it could have chosen
    /// (RFC 9111 §4.3.5): updates its fields and freshness like a `304` when the two agree,
    /// removes it when they contradict each other (another `ETag`, `Last-Modified` or length).
    /// - Returns: The updated GET response, or `nil` when there was none or it was removed.
    func updateStoredGet(
        for request: HTTPRequest, with response: HTTPResponse, requestTime: Int64, responseTime: Int64
    ) async -> StoredResponse? {
        let key = Self.getKey(for: request)
        guard let storedGet = await storedVariant(forKey: key, request: request) else { return nil }
        if HTTPCacheRules.headResponseUpdates(storedGet, with: response) {
            return await freshen(storedGet, key: key, with: response, requestTime: requestTime, responseTime: responseTime)
        }
        await remove(storedGet, forKey: key)
        return nil
    }

    /// The answer to `request` when memory holds a fresh response for it (or a `304` for its own
    /// conditions, or the `206` or `416` of its `Range`), made without suspending; `nil` when anything else may apply (a miss in memory,
    /// a stale response, a request the store does not answer), for the caller to go through
    /// ``response(for:body:policy:revalidatesInBackground:origin:)``, which gives the same answer
    /// for a fresh response.
    func freshAnswerInMemory(for request: HTTPRequest) -> HTTPCacheResponse? {
        let rangeOfGET = request.method == .get && request.headerFields[.range] != nil
        guard request.method == .get || request.method == .head,
              !rangeOfGET || !HTTPCacheRules.hasOriginPreconditions(request),
              let entry = memory.value(forKey: Self.key(for: request)),
              let stored = entry.variants.first(where: { HTTPCacheRules.varyMatches($0, request: request) }),
              !rangeOfGET || HTTPCacheRules.servesRanges(from: stored)
        else { return nil }
        let now = clock.nanosecondsNow
        guard rules.decision(for: request, stored: stored, now: now) == .fresh else { return nil }
        return serve(stored, for: request, now: now, outcome: .hit)
    }

    /// The most recent stored variant for `key` whose `Vary` fields match `request`.
    func storedVariant(forKey key: String, request: HTTPRequest) async -> StoredResponse? {
        guard let entry = await entry(forKey: key) else { return nil }
        return entry.variants.first { HTTPCacheRules.varyMatches($0, request: request) }
    }

    // MARK: - Serving stored responses

    /// `stored` as the answer to `request`: with `Age`, or a `304` when the request's own
    /// conditions match, or the part a `Range` asks for (`206`, or `416` when no byte of it
    /// exists; RFC 9110 §14), evaluated after the conditions as RFC 9110 §13.2.2 orders them.
    func serve(_ stored: StoredResponse, for request: HTTPRequest, now: Int64, outcome: HTTPCacheOutcome) -> HTTPCacheResponse {
        let fields = rules.servedFields(stored, now: now)
        if HTTPCacheRules.clientConditionMatches(request, stored: stored) {
            let response = HTTPResponse(status: .notModified, headerFields: HTTPCacheRules.notModifiedFields(fields))
            return finish(HTTPCacheResponse(response: response, body: HTTPCacheBody(), outcome: outcome))
        }
        switch HTTPCacheRules.byteRange(for: request, stored: stored) {
        case .part(let range):
            let fields = HTTPCacheRules.partialContentFields(fields, range: range, length: stored.body.count)
            let response = HTTPResponse(status: .partialContent, headerFields: fields)
            return finish(HTTPCacheResponse(response: response, body: HTTPCacheBody(bytes: Array(stored.body[range])), outcome: outcome))
        case .unsatisfiable(let length):
            let fields = HTTPCacheRules.rangeNotSatisfiableFields(length: length, date: now / HTTPCacheRules.nanosecondsPerSecond)
            let response = HTTPResponse(status: .rangeNotSatisfiable, headerFields: fields)
            return finish(HTTPCacheResponse(response: response, body: HTTPCacheBody(), outcome: outcome))
        case nil:
            let response = HTTPResponse(status: stored.status, headerFields: fields)
            let body = request.method == .head ? HTTPCacheBody() : HTTPCacheBody(bytes: stored.body)
            return finish(HTTPCacheResponse(response: response, body: body, outcome: outcome))
        }
    }

    func gatewayTimeout() -> HTTPCacheResponse {
        var fields = HTTPFields()
        fields[.contentLength] = "0"
        return finish(HTTPCacheResponse(
            response: HTTPResponse(status: .gatewayTimeout, headerFields: fields), body: HTTPCacheBody(), outcome: .miss))
    }

    /// Counts the outcome, and adds `Cache-Status` when configured: every response passes here.
    func finish(_ result: HTTPCacheResponse) -> HTTPCacheResponse {
        switch result.outcome.kind {
        case .hit: outcomes.withLock { $0.hits += 1 }
        case .stale: outcomes.withLock { $0.stale += 1 }
        case .miss, .revalidated: outcomes.withLock { $0.forwarded += 1 }
        case .bypass: break
        }
        return configuration.addsCacheStatus ? addingCacheStatus(to: result) : result
    }

    /// `result` with its `Cache-Status` field (RFC 9211): the one place that writes it.
    func addingCacheStatus(to result: HTTPCacheResponse) -> HTTPCacheResponse {
        var result = result
        result.response.headerFields.append(HTTPField(
            name: .cacheStatus, value: result.outcome.cacheStatus(cacheName: configuration.cacheName)))
        return result
    }
}
