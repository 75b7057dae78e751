import HTTPTypes

extension HTTPCacheRules {
    /// How a stored response to GET answers a HEAD request without the origin, or `nil` when it
    /// may not.
    ///
    /// RFC 9111 §4 lets a stored response serve a request whose method its own method allows, and
    /// a GET response carries everything a HEAD response has (RFC 9110 §9.3.2): its status and
    /// fields, `Content-Length` included, without the body. The GET response answers when the
    /// rules serve it as it is: fresh (``HTTPCacheOutcome/hit``), stale within the request's
    /// `max-stale` (``HTTPCacheOutcome/stale``), or anything stored under
    /// ``HTTPCachePolicy/returnStoredElseLoad`` and ``HTTPCachePolicy/returnStoredDontLoad``. When it
    /// would need the origin (to validate, `stale-while-revalidate`, or the policy reloads or
    /// revalidates), the HEAD goes to the origin as itself: a conditional HEAD cannot refresh a
    /// stored body.
    ///
    /// - Parameters:
    ///   - storedGet: A stored response to GET whose `Vary` matches `request`.
    ///   - request: The request; anything but HEAD gets `nil`.
    ///   - policy: The request's cache policy.
    ///   - now: The current time, in nanoseconds since the Unix epoch.
    /// - Returns: `.hit` or `.stale`, or `nil` when the GET response may not answer.
    /// - Complexity: O(n) in the request's `Cache-Control` length.
    func headAnswer(
        from storedGet: StoredResponse, for request: HTTPRequest, policy: HTTPCachePolicy, now: Int64
    ) -> HTTPCacheOutcome? {
        guard request.method == .head else { return nil }
        let verdict = self.decision(for: request, stored: storedGet, now: now)
        switch policy.kind {
        case .returnStoredElseLoad, .returnStoredDontLoad:
            return verdict == .fresh ? .hit : .stale
        case .reload, .revalidate:
            return nil
        case .useProtocolPolicy, .noStore:
            switch verdict {
            case .fresh: return .hit
            case .staleAllowed: return .stale
            case .staleWhileRevalidate, .validate: return nil
            }
        }
    }

    /// Whether `head`, a response to HEAD, is one a stored GET response may take fields from:
    /// a `200` this cache could keep (no `no-store`, nor `private` in shared mode). It need not be
    /// worth storing itself: RFC 9111 §4.3.5 updates the GET responses on any `200` to HEAD.
    ///
    /// - Complexity: O(n) in the number of fields.
    func mayUpdateStoredGet(from head: StoredResponse) -> Bool {
        guard head.status.code == 200 else { return false }
        let cc = directives(head)
        return !cc.contains("no-store") && !(mode.isShared && cc.contains("private"))
    }

    /// Whether a `200` response to HEAD may update a stored response to GET (RFC 9111 §4.3.5),
    /// rather than mark it stale.
    ///
    /// It may when every validator the HEAD response carries (`ETag`, `Last-Modified`) equals the
    /// stored one, and its `Content-Length`, when it has one, equals the stored body's length. A
    /// HEAD response without validators or length has nothing to contradict and updates.
    ///
    /// - Complexity: O(n) in the number of fields.
    static func headResponseUpdates(_ storedGet: StoredResponse, with head: HTTPResponse) -> Bool {
        guard head.status.code == 200 else { return false }
        let fields = head.headerFields
        let etags = fields[values: .eTag]
        if !etags.isEmpty, etags.count != 1 || etags[0].trimmingSpaces != storedGet.etag { return false }
        let lastModified = fields[values: .lastModified]
        if !lastModified.isEmpty, lastModified.count != 1 || lastModified[0] != storedGet.lastModifiedText { return false }
        if let length = fields[.contentLength], Int(length.trimmingSpaces) != storedGet.body.count { return false }
        return true
    }
}
