#if AsyncHTTPClient
/// The origin's scheme and authority, parsed from `--origin http://host:port`.
struct OriginURL: Equatable {
    let scheme: String
    let authority: String

    /// Parses `http://host[:port]` or `https://host[:port]`, with an optional trailing `/`;
    /// nil for anything else (a path prefix is not supported).
    init?(_ text: String) {
        let scheme: String
        let rest: Substring
        if text.hasPrefix("http://") {
            scheme = "http"
            rest = text.dropFirst(7)
        } else if text.hasPrefix("https://") {
            scheme = "https"
            rest = text.dropFirst(8)
        } else {
            return nil
        }
        let authority = rest.hasSuffix("/") ? rest.dropLast() : rest
        guard !authority.isEmpty, !authority.contains("/"), !authority.contains("?"), !authority.contains("#") else {
            return nil
        }
        self.scheme = scheme
        self.authority = String(authority)
    }
}

/// A listening address, parsed from `--listen host:port`.
struct ListenAddress: Equatable {
    let host: String
    let port: Int

    /// Parses `host:port` (`[v6]:port` too); nil when the port is missing or out of range.
    init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (0...65535).contains(port)
        else { return nil }
        var host = text[..<colon]
        if host.hasPrefix("["), host.hasSuffix("]") {
            host = host.dropFirst().dropLast()
        }
        guard !host.isEmpty else { return nil }
        self.host = String(host)
        self.port = port
    }
}
#endif  // AsyncHTTPClient
