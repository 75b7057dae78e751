#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import Logging
import Stash

/// The engine behind ``HTTPCache``: applies ``HTTPCacheRules`` to the tiers and the origin.
final class HTTPCacheEngine: Sendable {
    let configuration: HTTPCache.Configuration
    let rules: HTTPCacheRules
    let memory: MemoryCache<String, StoredEntry>
    private let disk: DiskCache<Data>?
    private let clock: any CacheClock
    private let logger: Logger
    /// What changes after init, behind one lock.
    private struct State {
        /// The gate of the origin request under way for each key.
        var inFlight: [String: FetchGate] = [:]
        var diskClosed = false
    }
    private let state = LockedValue(State())
    /// The background revalidations under way, for shutdown to wait for.
    private let background = BackgroundTasks()
    /// How many responses had each outcome (see ``statistics``).
    private let outcomes = LockedValue(OutcomeCounts())
    private struct OutcomeCounts {
        var hits = 0
        var stale = 0
        var forwarded = 0
    }
    /// Disk failures, logged once per incident, not per call; the first success ends one.
    private let diskIncidents: IncidentLog

    init(configuration: HTTPCache.Configuration) throws(StashError) {
        // One policy with the other caches: a value out of range is clamped, with a warning,
        // never refused.
        var configuration = configuration
        let warningLogger = configuration.logger  // not read through `configuration` while a field of it is inout
        func clamp<T: Comparable>(_ name: String, _ value: inout T, atLeast minimum: T, meaning: String) {
            guard value < minimum else { return }
            warningLogger.warning("[Stash] \(name) \(value) is out of range; using \(minimum), \(meaning)")
            value = minimum
        }
        clamp("memoryCostLimit", &configuration.memoryCostLimit, atLeast: 0, meaning: "which stores nothing in memory")
        clamp("memoryCountLimit", &configuration.memoryCountLimit, atLeast: 0, meaning: "which stores nothing in memory")
        clamp("diskSizeLimit", &configuration.diskSizeLimit, atLeast: 0, meaning: "which stores nothing on disk")
        clamp("diskCountLimit", &configuration.diskCountLimit, atLeast: 0, meaning: "which stores nothing on disk")
        clamp("maximumEntrySize", &configuration.maximumEntrySize, atLeast: 0, meaning: "which stores no body")
        clamp("maximumHeaderSize", &configuration.maximumHeaderSize, atLeast: 0, meaning: "which stores no response")
        clamp("maximumVariantsPerURL", &configuration.maximumVariantsPerURL, atLeast: 1, meaning: "one variant per URL")
        if configuration.maximumVariantsPerURL > StoredEntry.maximumVariants {
            warningLogger.warning(
                "[Stash] maximumVariantsPerURL \(configuration.maximumVariantsPerURL) is out of range; using \(StoredEntry.maximumVariants), the most a stored record holds")
            configuration.maximumVariantsPerURL = StoredEntry.maximumVariants
        }
        clamp("heuristicFreshnessLimit", &configuration.heuristicFreshnessLimit, atLeast: .zero,
              meaning: "no heuristic freshness")
        clamp("staleIfUnreachable", &configuration.staleIfUnreachable, atLeast: .zero,
              meaning: "no stale response when the origin is unreachable")
        let cap = configuration.heuristicFreshnessLimit.components.seconds
        self.configuration = configuration
        rules = HTTPCacheRules(
            mode: configuration.mode, heuristicCap: cap,
            staleIfUnreachable: configuration.staleIfUnreachable.components.seconds)
        clock = configuration.clock
        logger = configuration.logger
        diskIncidents = IncidentLog(logger: configuration.logger, clock: configuration.clock)
        memory = MemoryCache(configuration: .init(
            label: "Stash.HTTPCache", countLimit: configuration.memoryCountLimit, costLimit: configuration.memoryCostLimit,
            clock: configuration.clock, logger: configuration.logger))
        if let directory = configuration.directory {
            disk = try DiskCache<Data>(
                directory: directory,
                configuration: .init(
                    countLimit: configuration.diskCountLimit, sizeLimit: configuration.diskSizeLimit,
                    logger: configuration.logger))
        } else {
            disk = nil
        }
    }

    // MARK: - Statistics

    /// See ``HTTPCache/statistics``.
    var statistics: CacheStatistics {
        let counts = outcomes.withLock { $0 }
        return CacheStatistics(hits: counts.hits + counts.stale, misses: counts.forwarded, staleValuesServed: counts.stale)
            .addingEvictions(of: memory.statistics).addingEvictions(of: disk?.statistics ?? CacheStatistics())
    }

    // MARK: - Keys

    /// `METHOD scheme://authority/path?query`, with the scheme and authority lower-cased
    /// and a default port dropped.
    static func key(method: HTTPRequest.Method, scheme: String?, authority: String?, path: String?) -> String {
        let scheme = scheme?.lowercased() ?? "http"
        var authority = authority?.lowercased() ?? ""
        if scheme == "http", authority.hasSuffix(":80") { authority.removeLast(3) }
        if scheme == "https", authority.hasSuffix(":443") { authority.removeLast(4) }
        let path = path.flatMap { $0.isEmpty ? nil : $0 } ?? "/"
        return "\(method.rawValue) \(scheme)://\(authority)\(path)"
    }

    static func key(for request: HTTPRequest) -> String {
        key(method: request.method, scheme: request.scheme, authority: request.authority, path: request.path)
    }

    // MARK: - Answering

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
    private func storedRangeAnswer(for request: HTTPRequest, policy: HTTPCachePolicy, onlyIfCached: Bool) async -> HTTPCacheResponse? {
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
    private static func withoutRange(_ request: HTTPRequest) -> HTTPRequest {
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
    private func storedGetAnswer(for request: HTTPRequest, policy: HTTPCachePolicy, now: Int64) async -> HTTPCacheResponse? {
        guard let storedGet = await storedVariant(forKey: Self.getKey(for: request), request: request),
              let outcome = rules.headAnswer(from: storedGet, for: request, policy: policy, now: now)
        else { return nil }
        return serve(storedGet, for: request, now: now, outcome: outcome)
    }

    /// Applies a `200` response to HEAD to the stored GET response it could have chosen
    /// (RFC 9111 §4.3.5): updates its fields and freshness like a `304` when the two agree,
    /// removes it when they contradict each other (another `ETag`, `Last-Modified` or length).
    /// - Returns: The updated GET response, or `nil` when there was none or it was removed.
    private func updateStoredGet(
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

    /// The entry for `key`: from memory, else from disk (then kept in memory).
    func entry(forKey key: String) async -> StoredEntry? {
        if let entry = memory.value(forKey: key) { return entry }
        guard let disk, !isDiskClosed else { return nil }
        do {
            guard let data = try await disk.value(forKey: key) else { return nil }
            guard let entry = StoredEntry.decode(data) else {
                logger.warning("a stored HTTP response could not be decoded and was removed", metadata: ["key": "\(key)"])
                _ = try? await disk.removeValue(forKey: key)
                return nil
            }
            memory.setValue(entry, forKey: key, cost: entry.cost)
            return entry
        } catch {
            reportDiskFailure("reading a stored HTTP response failed; the disk tier is skipped", key: key, error: error)
            return nil
        }
    }

    private var isDiskClosed: Bool { state.withLock { $0.diskClosed } }

    /// Logs a disk failure unless the previous disk operation failed too.
    private func reportDiskFailure(_ message: Logger.Message, key: String, error: any Error) {
        diskIncidents.recordFailure(message, metadata: ["key": "\(key)", "error": "\(error)"])
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

    // MARK: - Asking the origin

    /// Fetches unconditionally and stores the response when allowed.
    private func fetch(
        request: HTTPRequest, body: HTTPCacheBody?, key: String, policy: HTTPCachePolicy,
        origin: @Sendable (HTTPRequest, HTTPCacheBody?) async throws -> (HTTPResponse, HTTPCacheBody)
    ) async throws -> HTTPCacheResponse {
        let requestTime = clock.nanosecondsNow
        let (response, responseBody) = try await origin(HTTPCacheRules.withoutConditionals(request), body)
        return try await store(
            response: response, body: responseBody, request: request, requestTime: requestTime, key: key, replacing: nil)
    }

    /// Validates `stored` with the origin: a 304 updates and serves it; an error (before the head,
    /// a 5xx, or a body that fails before it is answered) serves it stale when `stale-if-error`
    /// allows, or, for an origin that could not be reached, ``HTTPCache/Configuration/staleIfUnreachable``;
    /// anything else replaces it.
    private func validate(
        request: HTTPRequest, key: String, stored: StoredResponse, policy: HTTPCachePolicy,
        origin: @Sendable (HTTPRequest, HTTPCacheBody?) async throws -> (HTTPResponse, HTTPCacheBody)
    ) async throws -> HTTPCacheResponse {
        let (outgoing, _) = HTTPCacheRules.validationRequest(for: request, stored: stored)
        let requestTime = clock.nanosecondsNow
        let response: HTTPResponse
        let responseBody: HTTPCacheBody
        do {
            (response, responseBody) = try await origin(outgoing, nil)
        } catch {
            let now = clock.nanosecondsNow
            if rules.mayServeStaleOnError(stored, for: request, now: now, originUnreachable: true) {
                return serve(stored, for: request, now: now, outcome: .stale)
            }
            throw error
        }
        let now = clock.nanosecondsNow
        if response.status.code == 304 {
            await Self.discard(responseBody)
            let updated = await freshen(stored, key: key, with: response, requestTime: requestTime, responseTime: now)
            return serve(updated, for: request, now: now, outcome: .revalidated)
        }
        if (500...599).contains(response.status.code), rules.mayServeStaleOnError(stored, for: request, now: now) {
            await Self.discard(responseBody)
            return serve(stored, for: request, now: now, outcome: .stale)
        }
        do {
            return try await store(
                response: response, body: responseBody, request: request, requestTime: requestTime, key: key, replacing: stored)
        } catch {
            // The new body failed before it was answered (cut, or stalled past the client's read
            // timeout): nothing was stored, and the old response may still serve (RFC 5861 §4).
            let now = clock.nanosecondsNow
            if rules.mayServeStaleOnError(stored, for: request, now: now, originUnreachable: true) {
                return serve(stored, for: request, now: now, outcome: .stale)
            }
            throw error
        }
    }

    /// Whether two stored responses' fields are the same but for `Date`.
    static func differOnlyInDate(_ a: HTTPFields, _ b: HTTPFields) -> Bool {
        var a = a, b = b
        a[.date] = nil
        b[.date] = nil
        return a == b
    }

    /// Reads an origin body the answer does not use (a 304's, which is empty; an error page served
    /// around) to its end, so a client such as AsyncHTTPClient can reuse the connection: a body
    /// dropped unread cancels the request and closes it, and every revalidation then paid for a
    /// new connection (docs/benchmarks.md, "HTTP client adapter (CachingHTTPClient)", has the cost).
    /// Reads at most 64 KiB; past that, or on an error, the connection is let go.
    static func discard(_ body: HTTPCacheBody) async {
        _ = try? await body.collect(upTo: 64 << 10)
    }

    /// `stored` updated by a 304 (or by a 200 to HEAD, RFC 9111 §4.3.5), written back to the tiers.
    @discardableResult
    func freshen(
        _ stored: StoredResponse, key: String, with notModified: HTTPResponse, requestTime: Int64, responseTime: Int64
    ) async -> StoredResponse {
        var update = notModified.headerFields
        // A 304 without `Date` was generated now (RFC 9110 §6.6.1); the stored `Date` would make it look old.
        if update[.date] == nil { update[.date] = HTTPDate.format(responseTime / 1_000_000_000) }
        let fields = HTTPCacheRules.fieldsUpdated(stored.fields, with: update)
        let updated = stored.updating(fields: fields, requestTime: requestTime, responseTime: responseTime)
        if let entry = await entry(forKey: key), let replaced = entry.replacing(stored, with: updated) {
            if Self.differOnlyInDate(fields, stored.fields) {
                // The disk copy is the same response received earlier: staler, never fresher, so
                // read back after an eviction it is only revalidated sooner. Rewriting it on every
                // 304 cost a disk-tier transaction per revalidation, stash-proxy's bottleneck.
                memory.setValue(replaced, forKey: key, cost: replaced.cost)
            } else {
                await write(replaced, forKey: key)
            }
        } else {
            await insert(updated, forKey: key)
        }
        return updated
    }

    /// Reads a response from the origin and stores it when RFC 9111 and the limits allow;
    /// otherwise streams it through.
    private func store(
        response: HTTPResponse, body: HTTPCacheBody, request: HTTPRequest, requestTime: Int64, key: String,
        replacing old: StoredResponse?
    ) async throws -> HTTPCacheResponse {
        let responseTime = clock.nanosecondsNow
        var fields = HTTPCacheRules.storableFields(of: response.headerFields)
        // RFC 9110 §6.6.1: a recipient with a clock adds `Date` to a response it caches without one.
        if fields[.date] == nil { fields[.date] = HTTPDate.format(responseTime / 1_000_000_000) }
        let varyNames = HTTPCacheRules.varyNames(fields) ?? ["*"]
        let head = StoredResponse(
            status: response.status, fields: fields, requestTime: requestTime, responseTime: responseTime,
            varyValues: HTTPCacheRules.varyValues(names: varyNames, request: request), body: [])
        let declaredLength = response.headerFields[.contentLength].flatMap { Int($0) }
        let headerSize = fields.reduce(0) { $0 + $1.name.rawName.utf8.count + $1.value.utf8.count + 4 }
        if request.method == .head, rules.mayUpdateStoredGet(from: head),
           let updated = await updateStoredGet(for: request, with: response, requestTime: requestTime, responseTime: responseTime) {
            // The HEAD is answered as the updated GET response would be, with the stored fields the
            // origin did not repeat, as after a 304; that GET response answers the next HEADs.
            await Self.discard(body)
            return serve(updated, for: request, now: clock.nanosecondsNow, outcome: .miss)
        }
        guard rules.isStorable(head, for: request), headerSize <= configuration.maximumHeaderSize,
              (declaredLength ?? 0) <= configuration.maximumEntrySize
        else {
            if let old { await remove(old, forKey: key) }
            return finish(HTTPCacheResponse(response: response, body: body, outcome: .miss))
        }
        // Read the body whole, up to the limit; a longer one streams through unstored.
        let (bytes, rest) = try await Self.read(body, upTo: configuration.maximumEntrySize)
        if let rest {
            if let old { await remove(old, forKey: key) }
            return finish(HTTPCacheResponse(response: response, body: rest, outcome: .miss))
        }
        let result = HTTPCacheResponse(response: response, body: HTTPCacheBody(bytes: bytes), outcome: .miss)
        guard declaredLength == nil || declaredLength == bytes.count || request.method == .head else {
            // A body shorter or longer than its Content-Length is damaged: served as received, never stored.
            if let old { await remove(old, forKey: key) }
            return finish(result)
        }
        let stored = StoredResponse(
            status: response.status, fields: fields, requestTime: requestTime, responseTime: responseTime,
            varyValues: head.varyValues, body: bytes)
        await insert(stored, forKey: key)
        if HTTPCacheRules.clientConditionMatches(request, stored: stored) {
            return serve(stored, for: request, now: clock.nanosecondsNow, outcome: .miss)
        }
        return finish(result)
    }

    /// Reads `body` whole when it has at most `limit` bytes; otherwise returns the bytes read so far
    /// and the rest of the stream joined into one body. An error from the stream is rethrown.
    static func read(_ body: HTTPCacheBody, upTo limit: Int) async throws -> ([UInt8], HTTPCacheBody?) {
        if let bytes = body.bufferedBytes {
            return bytes.count <= limit ? (bytes, nil) : ([], body)
        }
        var iterator = body.makeAsyncIterator()
        var bytes: [UInt8] = []
        while let chunk = try await iterator.next() {
            if bytes.count + chunk.count > limit {
                let source = ChunkSource(prefix: bytes[...] + chunk, rest: iterator)
                return ([], HTTPCacheBody(source: source))
            }
            bytes.append(contentsOf: chunk)
        }
        return (bytes, nil)
    }

    // MARK: - Writing to the tiers

    func insert(_ response: StoredResponse, forKey key: String) async {
        let entry = (await entry(forKey: key))?.inserting(response, limit: configuration.maximumVariantsPerURL)
            ?? StoredEntry(variants: [response])
        await write(entry, forKey: key)
    }

    func remove(_ response: StoredResponse, forKey key: String) async {
        guard let entry = await entry(forKey: key) else { return }
        if let remaining = entry.removing(response) {
            await write(remaining, forKey: key)
        } else {
            memory.removeValue(forKey: key)
            if let disk, !isDiskClosed { _ = try? await disk.removeValue(forKey: key) }
        }
    }

    func write(_ entry: StoredEntry, forKey key: String) async {
        memory.setValue(entry, forKey: key, cost: entry.cost)
        guard let disk, !isDiskClosed else { return }
        do {
            guard let encoded = entry.encoded() else {
                // A length past 4 GiB: memory only. The disk's older record must not come back.
                _ = try await disk.removeValue(forKey: key)
                return
            }
            try await disk.setValue(Data(encoded), forKey: key)
            diskIncidents.recordSuccess { _ in "the HTTP cache's disk tier works again" }
        } catch {
            // The disk may still hold the key's older record: once memory evicts the new one, that
            // record would be served (with variants a removal meant to drop). Best effort: a disk
            // that failed the write may fail this too, and the record then goes at its expiry.
            _ = try? await disk.removeValue(forKey: key)
            reportDiskFailure("storing an HTTP response on disk failed; it is kept in memory only", key: key, error: error)
        }
    }

    /// Removes the GET and HEAD entries of one URL from both tiers.
    func invalidate(scheme: String?, authority: String?, path: String) async throws {
        for method in [HTTPRequest.Method.get, .head] {
            let key = Self.key(method: method, scheme: scheme, authority: authority, path: path)
            memory.removeValue(forKey: key)
            if let disk, !isDiskClosed { _ = try await disk.removeValue(forKey: key) }
        }
    }

    func removeAll() async throws {
        memory.removeAll()
        if let disk, !isDiskClosed { try await disk.removeAll() }
    }

    func close() {
        let shouldClose = state.withLock { state -> Bool in
            defer { state.diskClosed = true }
            return !state.diskClosed
        }
        if shouldClose { disk?.close() }
    }

    // MARK: - Background revalidation

    /// Starts one background revalidation of `stored` (`stale-while-revalidate`), unless one
    /// (or a foreground fetch) is already under way for `key`.
    func revalidateInBackground(
        key: String, request: HTTPRequest, stored: StoredResponse,
        origin: @escaping @Sendable (HTTPRequest, HTTPCacheBody?) async throws -> (HTTPResponse, HTTPCacheBody)
    ) {
        let gate = FetchGate()
        let started: Bool = state.withLock { state in
            guard state.inFlight[key] == nil else { return false }
            state.inFlight[key] = gate
            return true
        }
        guard started else { return }
        background.start {
            defer {
                self.state.withLock { state in
                    if state.inFlight[key] === gate { state.inFlight[key] = nil }
                }
                gate.open()
            }
            do {
                _ = try await self.validate(request: request, key: key, stored: stored, policy: .useProtocolPolicy, origin: origin)
            } catch {
                self.logger.warning(
                    "a background revalidation failed; the stale response stays stored",
                    metadata: ["key": "\(key)", "error": "\(error)"])
            }
        }
    }

    /// How many calls wait for the origin request under way for `key`: for tests.
    func waiterCount(forKey key: String) -> Int {
        state.withLock { $0.inFlight[key] }?.waiterCount ?? 0
    }

    /// Waits, without a bound, for every background revalidation started so far: for tests (shutdown
    /// uses ``waitForBackgroundRevalidations(timeout:)``).
    func waitForBackgroundRevalidations() async {
        await background.waitUntilIdle()
    }

    /// ``waitForBackgroundRevalidations()`` for at most `timeout`; logs those left running.
    func waitForBackgroundRevalidations(timeout: Duration) async {
        guard !(await background.waitUntilIdle(timeout: timeout, clock: clock)) else { return }
        logger.warning(
            "closing the HTTP cache: background revalidations had not finished (timed out or cancelled); they store into memory only",
            metadata: ["running": "\(background.count)", "timeout": "\(timeout)"])
    }
}

extension HTTPField.Name {
    /// `Cache-Status` (RFC 9211).
    package static let cacheStatus = HTTPField.Name("Cache-Status")!
}
