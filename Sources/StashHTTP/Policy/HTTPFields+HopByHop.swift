import HTTPTypes

extension HTTPFields {
    /// The hop-by-hop fields of RFC 9110 §7.6.1, lower-cased: they describe one connection, so a
    /// proxy never forwards them and a cache never stores them. `Proxy-Connection` and
    /// `Keep-Alive` are obsolete but still sent by old clients. The one list in Stash: the cache's
    /// store, the proxy and the AsyncHTTPClient adapter all use it.
    package static let hopByHopNames: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
    ]

    /// The lower-cased names the `Connection` field lines in `lines` list (RFC 9110 §7.6.1): hop-by-hop too.
    ///
    /// - Complexity: O(n) in the length of the lines.
    package static func connectionOptions(_ lines: some Sequence<some StringProtocol>) -> Set<String> {
        var names = Set<String>()
        for line in lines {
            for member in line.split(separator: ",") { names.insert(member.trimmingSpaces.lowercased()) }
        }
        return names
    }

    /// Removes the hop-by-hop fields (``hopByHopNames``), the fields `Connection` names, and the
    /// fields named in `alsoRemoving` (lower-cased).
    ///
    /// - Complexity: O(n) in the number of fields; no copy when there is nothing to remove.
    package mutating func removeHopByHop(alsoRemoving extra: Set<String> = []) {
        let names = Self.hopByHopNames.union(extra).union(Self.connectionOptions(self[values: .connection]))
        guard contains(where: { names.contains($0.name.canonicalName) }) else { return }
        self = HTTPFields(filter { !names.contains($0.name.canonicalName) })
    }
}
