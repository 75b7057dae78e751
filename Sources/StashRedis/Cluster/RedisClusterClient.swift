#if Redis
import Logging
import NIOCore
import NIOPosix
import Stash

/// A client for a Redis Cluster: routes each command to the primary that owns
/// its key's hash slot, follows `MOVED` and `ASK` redirections, and refreshes
/// its map of slots when a node fails over.
///
/// ```swift
/// let cluster = RedisClusterClient(seeds: [("127.0.0.1", 7000)], configuration: RedisConfiguration())
/// let tier = RedisCacheTier(cluster: cluster, codec: DiskCodec<String>.string)
/// ```
///
/// The slot map is read with `CLUSTER SLOTS` from the seeds (or any known node)
/// on first use, after a `MOVED`, and after a node stops answering. Each node
/// gets its own ``RedisClient`` (a pool of pipelined connections) made from
/// `configuration` with the node's address. Keys that must be on one node
/// together (a multi-key command, a script's keys) need a shared hash tag.
///
/// Thread-safety: safe to use from any thread or task.
public final class RedisClusterClient: RedisCommandExecutor {
    private struct State {
        var topology: RedisClusterTopology?
        var clients: [RedisClusterTopology.Node: RedisClient] = [:]
        var closed = false
    }

    private let seeds: [RedisClusterTopology.Node]
    private let configuration: RedisConfiguration
    private let group: any EventLoopGroup
    private let logger: Logger
    private let state = LockedValue(State())
    /// How many redirections or retries one command may follow. Default 5.
    public let maximumRedirections: Int

    /// Creates a cluster client. Connects lazily.
    ///
    /// - Parameters:
    ///   - seeds: Host and port of one or more nodes to read the slot map from.
    ///   - configuration: Credentials, TLS, timeouts and pool size used for every node
    ///     (its host and port are ignored). Default ``RedisConfiguration/init(host:port:)``'s defaults.
    ///   - maximumRedirections: How many redirections or retries one command may follow. Default 5.
    ///   - eventLoopGroup: The event loops. Default NIO's shared singleton group.
    ///   - logger: Where topology changes are logged. Default a logger labelled `Stash.RedisClusterClient`.
    /// - Complexity: O(1); no I/O.
    public init(seeds: [(host: String, port: Int)],
                configuration: RedisConfiguration = RedisConfiguration(),
                maximumRedirections: Int = 5,
                eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
                logger: Logger = Logger(label: "Stash.RedisClusterClient")) {
        self.seeds = seeds.map { RedisClusterTopology.Node(host: $0.host, port: $0.port) }
        self.configuration = configuration
        self.maximumRedirections = maximumRedirections
        self.group = eventLoopGroup
        self.logger = logger
    }

    /// Sends `command` to the primary that owns its routing key's slot, following redirections.
    ///
    /// - Parameter command: The command; a `nil` routing key goes to any primary.
    /// - Returns: The reply.
    /// - Throws: ``RedisError``: the server's error, a connection failure that
    ///   outlasted the retries, or `.clusterRedirectionLoop`.
    /// - Complexity: One round trip when the slot map is current; one more per redirection.
    package func send(_ command: RedisCommand) async throws(RedisError) -> RESPValue {
        let slot = command.routingKey.map { RedisKeySlot(key: $0) }
        var askTarget: RedisClusterTopology.Node?
        var lastError: RedisError?
        for _ in 0...maximumRedirections {
            let node: RedisClusterTopology.Node
            if let askTarget {
                node = askTarget
            } else {
                let topology = try await currentTopology()
                guard let owner = slot.flatMap({ topology.primary(for: $0) }) ?? topology.primaries.first else {
                    lastError = RedisError(.unavailable, "no cluster node serves slot \(slot?.rawValue ?? -1)")
                    try await refreshTopology()
                    continue
                }
                node = owner
            }
            let client = self.client(for: node)
            do {
                if askTarget != nil {
                    askTarget = nil
                    let results = await client.send(pipeline: [RedisCommand("ASKING"), command])
                    return try results[1].get()
                }
                return try await client.send(command)
            } catch {
                lastError = error
                switch Redirection(error) {
                case .moved(let movedSlot, let target):
                    state.withLock { $0.topology?.assign(movedSlot, to: target) }
                    // A moved slot usually means a resharding or failover: reread the whole map.
                    try? await refreshTopology()
                case .ask(let target):
                    askTarget = target
                case .retryAfterRefresh:
                    try? await refreshTopology()
                case .none:
                    throw error
                }
            }
        }
        throw RedisError(.clusterRedirectionLoop, "gave up after \(maximumRedirections) redirections or retries", cause: lastError)
    }

    /// Sends `commands` pipelined: one write per node that owns some of their keys,
    /// the nodes in parallel; a command redirected by `MOVED`/`ASK` is then resent alone.
    ///
    /// - Parameter commands: Any commands; keyless ones go to the first primary.
    /// - Returns: One result per command, in order.
    /// - Complexity: One round trip per node involved, plus one per redirected command.
    package func send(pipeline commands: [RedisCommand]) async -> [Result<RESPValue, RedisError>] {
        let topology: RedisClusterTopology
        do {
            topology = try await currentTopology()
        } catch {
            return commands.map { _ in .failure(error) }
        }
        var groups: [RedisClusterTopology.Node: [Int]] = [:]
        for (index, command) in commands.enumerated() {
            let slot = command.routingKey.map { RedisKeySlot(key: $0) }
            guard let node = slot.flatMap({ topology.primary(for: $0) }) ?? topology.primaries.first else { continue }
            groups[node, default: []].append(index)
        }
        var results = [Result<RESPValue, RedisError>](
            repeating: .failure(RedisError(.unavailable, "no cluster node serves the command's slot")), count: commands.count)
        await withTaskGroup(of: [(Int, Result<RESPValue, RedisError>)].self) { group in
            for (node, indices) in groups {
                let client = self.client(for: node)
                let batch = indices.map { commands[$0] }
                group.addTask {
                    Array(zip(indices, await client.send(pipeline: batch)))
                }
            }
            for await answered in group {
                for (index, result) in answered { results[index] = result }
            }
        }
        for index in results.indices {
            if case .failure(let error) = results[index], Redirection(error) != .none {
                do {
                    results[index] = .success(try await send(commands[index]))
                } catch {
                    results[index] = .failure(error)
                }
            }
        }
        return results
    }

    /// One client per primary in the current slot map.
    ///
    /// - Returns: The primaries' clients.
    /// - Throws: ``RedisError`` when no node answers `CLUSTER SLOTS`.
    package func primaryClients() async throws(RedisError) -> [RedisClient] {
        let topology = try await currentTopology()
        return topology.primaries.map { client(for: $0) }
    }

    /// Closes every node's connections.
    public func close() async {
        let clients: [RedisClient] = state.withLock { state in
            state.closed = true
            return Array(state.clients.values)
        }
        for client in clients { await client.close() }
    }

    /// Rereads the slot map from the known nodes, then the seeds; the first answer wins.
    ///
    /// - Throws: ``RedisError`` `.unavailable` when no node answers.
    package func refreshTopology() async throws(RedisError) {
        let known: [RedisClusterTopology.Node] = state.withLock { $0.topology?.primaries ?? [] }
        var candidates = known
        for seed in seeds where !candidates.contains(seed) { candidates.append(seed) }
        var lastError: RedisError?
        for node in candidates {
            do {
                let reply = try await client(for: node).send(RedisCommand("CLUSTER", ["SLOTS"]))
                let topology = try RedisClusterTopology(clusterSlots: reply, defaultHost: node.host)
                guard !topology.primaries.isEmpty else { continue }
                let changed: Bool = state.withLock { state in
                    let changed = state.topology != nil && state.topology != topology
                    state.topology = topology
                    return changed
                }
                if changed {
                    logger.info("Redis Cluster slot map changed", metadata: ["primaries": "\(topology.primaries)"])
                }
                return
            } catch {
                lastError = error
            }
        }
        throw RedisError(.unavailable, "no cluster node answered CLUSTER SLOTS (tried \(candidates))", cause: lastError)
    }

    private func currentTopology() async throws(RedisError) -> RedisClusterTopology {
        if let topology = state.withLock({ $0.topology }) { return topology }
        try await refreshTopology()
        guard let topology = state.withLock({ $0.topology }) else {
            throw RedisError(.unavailable, "the cluster's slot map is unknown")
        }
        return topology
    }

    private func client(for node: RedisClusterTopology.Node) -> RedisClient {
        state.withLock { state in
            if let client = state.clients[node] { return client }
            let client = RedisClient(configuration: configuration.with(host: node.host, port: node.port),
                                     eventLoopGroup: group, logger: logger)
            state.clients[node] = client
            return client
        }
    }

    /// What a failed command asks the cluster client to do next.
    enum Redirection: Equatable {
        case moved(RedisKeySlot, RedisClusterTopology.Node)
        case ask(RedisClusterTopology.Node)
        case retryAfterRefresh
        case none

        init(_ error: RedisError) {
            switch error.code {
            case .serverError:
                let parts = error.message.split(separator: " ")
                if parts.count == 3, parts[0] == "MOVED" || parts[0] == "ASK",
                   let slotNumber = Int(parts[1]), (0..<RedisKeySlot.count).contains(slotNumber),
                   let colon = parts[2].lastIndex(of: ":"), let port = Int(parts[2][parts[2].index(after: colon)...]) {
                    let node = RedisClusterTopology.Node(host: String(parts[2][..<colon]), port: port)
                    self = parts[0] == "MOVED" ? .moved(RedisKeySlot(rawValue: slotNumber), node) : .ask(node)
                } else if error.message.hasPrefix("TRYAGAIN") || error.message.hasPrefix("CLUSTERDOWN") {
                    self = .retryAfterRefresh
                } else {
                    self = .none
                }
            case .connectionFailed, .connectionClosed, .timeout, .unavailable:
                self = .retryAfterRefresh
            default:
                self = .none
            }
        }
    }
}

extension RedisKeySlot {
    init(rawValue: Int) {
        self.rawValue = rawValue
    }
}
#endif  // Redis
