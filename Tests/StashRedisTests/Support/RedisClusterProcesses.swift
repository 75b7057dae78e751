#if Redis
import Foundation

/// A real local Redis Cluster: three primaries and one replica each, built with
/// `redis-cli --cluster create`, every node on 127.0.0.1 and a free port.
final class RedisClusterProcesses: @unchecked Sendable {
    // @unchecked Sendable: the servers array is fixed after init and each server
    // is only stopped by the owning test.
    let servers: [RedisServerProcess]

    init() throws {
        var servers: [RedisServerProcess] = []
        do {
            for _ in 0..<6 {
                servers.append(try RedisServerProcess.start([
                    "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                    "--cluster-node-timeout", "1000", "--cluster-require-full-coverage", "no",
                ]))
            }
            self.servers = servers
            try RedisServerProcess.runCLI(["--cluster", "create"] + servers.map { "127.0.0.1:\($0.port)" }
                + ["--cluster-replicas", "1", "--cluster-yes"])
            try waitUntil("every node reports cluster_state:ok") {
                try servers.allSatisfy { try $0.cli(["CLUSTER", "INFO"]).contains("cluster_state:ok") }
            }
        } catch {
            for server in servers { server.stop() }
            throw error
        }
    }

    deinit { stop() }

    func stop() {
        for server in servers { server.stop() }
    }

    /// The node (as a server) whose port is `port`.
    func server(port: Int) -> RedisServerProcess? { servers.first { $0.port == port } }

    /// The port of the primary that `CLUSTER NODES` (asked of a live node) says serves `slot`.
    func primaryPort(forSlot slot: Int, askingPort: Int) throws -> Int {
        let nodes = try RedisServerProcess.runCLI(["-p", "\(askingPort)", "CLUSTER", "NODES"])
        for line in nodes.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 9, fields[2].contains("master"), !fields[2].contains("fail") else { continue }
            for range in fields[8...] {
                let bounds = range.split(separator: "-").compactMap { Int($0) }
                if bounds.count == 2, (bounds[0]...bounds[1]).contains(slot) { return port(of: fields[1]) }
                if bounds.count == 1, bounds[0] == slot { return port(of: fields[1]) }
            }
        }
        throw TestServerError(message: "no primary serves slot \(slot):\n\(nodes)")
    }

    /// The port of a replica of the primary on `primaryPort`.
    func replicaPort(ofPrimaryPort primaryPort: Int) throws -> Int {
        let nodes = try RedisServerProcess.runCLI(["-p", "\(primaryPort)", "CLUSTER", "NODES"])
        let lines = nodes.split(separator: "\n").map { $0.split(separator: " ") }
        guard let primaryID = lines.first(where: { port(of: $0[1]) == primaryPort })?[0] else {
            throw TestServerError(message: "no node on \(primaryPort)")
        }
        guard let replica = lines.first(where: { $0.count > 3 && $0[3] == primaryID }) else {
            throw TestServerError(message: "no replica of \(primaryPort):\n\(nodes)")
        }
        return port(of: replica[1])
    }

    private func port(of address: Substring) -> Int {
        // "127.0.0.1:7000@17000"
        let hostPort = address.split(separator: "@")[0]
        return Int(hostPort.split(separator: ":").last!)!
    }

    /// Polls `condition` (a state of the servers, not a time) until it holds, up to 30 seconds.
    func waitUntil(_ what: String, _ condition: () throws -> Bool) throws {
        try Self.waitUntil(what, condition)
    }

    static func waitUntil(_ what: String, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if (try? condition()) == true { return }
            usleep(50_000)
        }
        throw TestServerError(message: "timed out waiting until \(what)")
    }
}
#endif  // Redis
