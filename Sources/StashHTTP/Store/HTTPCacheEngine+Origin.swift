#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import Logging
import Stash

/// Asking the origin: a plain fetch, a validation of a stored response, and storing what comes back.
extension HTTPCacheEngine {
    /// Fetches unconditionally and stores the response when allowed.
    func fetch(
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
    func validate(
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
                // Written to the store's memory tier directly, past `Cache`'s per-key order: a
                // concurrent write or invalidation of the key may land before this, and memory
                // then keeps the response this 304 has just confirmed, until it is revalidated or
                // evicted: the outcome of the same 304 arriving after that write.
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
    func store(
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
}
