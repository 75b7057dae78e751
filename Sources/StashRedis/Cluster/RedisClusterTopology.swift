#if Redis
/// Which primary serves each hash slot, as `CLUSTER SLOTS` reports it.
///
/// A pure value: parsing and lookups only, no I/O.
struct RedisClusterTopology: Sendable, Equatable {
    /// A node's address.
    struct Node: Sendable, Hashable, CustomStringConvertible {
        var host: String
        var port: Int
        var description: String { "\(host):\(port)" }
    }

    /// For each slot, an index into ``primaries``; -1 when no node serves it.
    private(set) var slotOwners: [Int32]
    /// The distinct primaries, in the order first seen.
    private(set) var primaries: [Node]

    init() {
        slotOwners = Array(repeating: -1, count: RedisKeySlot.count)
        primaries = []
    }

    /// The primary that serves `slot`, if any.
    func primary(for slot: RedisKeySlot) -> Node? {
        let index = Int(slotOwners[slot.rawValue])
        return index >= 0 ? primaries[index] : nil
    }

    /// Records that `node` now serves `slot` (after a `MOVED`).
    mutating func assign(_ slot: RedisKeySlot, to node: Node) {
        slotOwners[slot.rawValue] = Int32(index(of: node))
    }

    private mutating func index(of node: Node) -> Int {
        if let existing = primaries.firstIndex(of: node) { return existing }
        primaries.append(node)
        return primaries.count - 1
    }

    /// Parses a `CLUSTER SLOTS` reply: `[[start, end, [host, port, id, ...], replicas...], ...]`.
    ///
    /// - Parameter defaultHost: Used when a node reports an empty host (a node that
    ///   does not know its own address answers with the address it was reached at).
    /// - Throws: ``RedisError`` `.unexpectedReply` for a malformed reply.
    init(clusterSlots reply: RESPValue, defaultHost: String) throws(RedisError) {
        self.init()
        guard let ranges = reply.elements else {
            throw RedisError(.unexpectedReply, "CLUSTER SLOTS answered \(reply)")
        }
        for range in ranges {
            guard let fields = range.elements, fields.count >= 3,
                  let start = fields[0].integer, let end = fields[1].integer,
                  0 <= start, start <= end, end < RedisKeySlot.count,
                  let primary = fields[2].elements, primary.count >= 2,
                  let port = primary[1].integer else {
                throw RedisError(.unexpectedReply, "CLUSTER SLOTS has a malformed range: \(range)")
            }
            var host = primary[0].string ?? ""
            if host.isEmpty || host == "?" { host = defaultHost }
            let owner = Int32(index(of: Node(host: host, port: Int(port))))
            for slot in Int(start)...Int(end) { slotOwners[slot] = owner }
        }
    }
}
#endif  // Redis
