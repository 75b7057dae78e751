#if Redis
import Logging
@testable import Stash
@testable import StashRedis

/// Makes `Cache` instances that share one test server under one key prefix,
/// each with its own client and temporary directory, as separate servers of a
/// fleet would; ``close()`` closes every client.
final class SharedRedisCaches {
    let server: RedisServerProcess
    let prefix: String
    private var clients: [RedisClient] = []
    private var directories: [TemporaryDirectory] = []

    init(server: RedisServerProcess, prefix: String) {
        self.server = server
        self.prefix = prefix
    }

    /// A cache with a memory tier, a disk tier or both (or neither), and the shared Redis tier;
    /// `clock` is the memory tier's (and so the cache's, for loads).
    func make(
        memory: Bool = true, disk: Bool = true, clock: any CacheClock = SystemClock(), logger: Logger = Logger(label: "test")
    ) throws -> Cache<String> {
        try make(codec: .string, memory: memory, disk: disk, clock: clock, logger: logger)
    }

    /// ``make(memory:disk:clock:logger:)`` for values in `codec`'s format (its disk and Redis tiers'
    /// codec).
    func make<Value: Sendable>(
        codec: DiskCodec<Value>, memory: Bool = true, disk: Bool = true, clock: any CacheClock = SystemClock(),
        logger: Logger = Logger(label: "test")
    ) throws -> Cache<Value> {
        let client = RedisClient(configuration: RedisConfiguration(host: "127.0.0.1", port: server.port))
        clients.append(client)
        let tier = RedisCacheTier(executor: client, codec: codec, configuration: .init(keyPrefix: prefix))
        let directory = try TemporaryDirectory(prefix: "stash-redis-cache")
        directories.append(directory)
        return try Cache(
            memory: memory ? MemoryCache(configuration: .init(label: "test", clock: clock)) : nil,
            disk: disk ? try DiskCache(directory: directory.path, codec: codec) : nil,
            remote: tier, logger: logger)
    }

    func close() async {
        for client in clients { await client.close() }
        clients = []
        directories = []
    }
}

extension RedisServerProcess {
    /// How many times the server has run `command` (lowercase), from `INFO commandstats`;
    /// commands a script runs count too.
    func calls(of command: String) throws -> Int {
        let stats = try cli(["INFO", "commandstats"])
        guard let line = stats.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("cmdstat_\(command):") }),
              let calls = line.split(separator: "=").dropFirst().first?.split(separator: ",").first else { return 0 }
        return Int(calls) ?? 0
    }
}
#endif  // Redis
