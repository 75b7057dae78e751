#if AsyncHTTPClient
import ArgumentParser
import AsyncHTTPClient
import Logging
import NIOCore
import StashAsyncHTTPClient
import StashHTTP
#if Redis
import StashRedis
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `stash-proxy`: a caching reverse proxy in front of one origin.
@main
struct StashProxyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stash-proxy",
        abstract: "A caching HTTP/1.1 reverse proxy with RFC 9111 semantics, in front of one origin."
    )

    @Option(help: "Address to listen on, host:port (port 0 picks a free one; the bound port is printed).")
    var listen: String = "127.0.0.1:8002"

    @Option(help: "The origin, http://host:port.")
    var origin: String

    @Option(help: "Directory for the on-disk tier; omitted, responses are kept in memory only.")
    var directory: String?

    @Option(help: ArgumentHelp(
        "A Redis server, host:port, holding a cache shared by every stash-proxy given it (a tier behind memory and disk); omitted, the cache is this process's alone.",
        discussion: "Needs the Stash package's Redis trait (swift build --traits AsyncHTTPClient,Redis). A response one proxy stores is a hit for the others, and an unsafe request through any proxy removes its URL from all of them."))
    var redis: String?

    @Option(help: "The prefix of the shared cache's keys and invalidation channel in Redis.")
    var redisKeyPrefix: String = "stash-proxy:"

    @Flag(name: .customLong("private"), help: "Cache as a private (single-user) cache instead of a shared one.")
    var privateCache = false

    @Flag(help: "Forward every request without caching.")
    var noCache = false

    @Option(help: ArgumentHelp(
        "How the origin is reached: async-http-client (the AsyncHTTPClient adapter), urlsession (CachingURLSession), or urlsession-urlcache (plain URLSession and URLCache, no Stash cache).",
        discussion: "The two URLSession clients are the conformance harness of StashURLSession; they read each body whole."))
    var client: OriginClient = .asyncHTTPClient

    /// The HTTP client in front of the origin.
    enum OriginClient: String, ExpressibleByArgument {
        case asyncHTTPClient = "async-http-client"
        case urlSession = "urlsession"
        case urlSessionURLCache = "urlsession-urlcache"
    }

    @Option(help: "Seconds the origin has for its response head, and at most between two reads of its body.")
    var timeout: Int64 = 30

    @Option(help: "Seconds past expiry a stored response may still be served when the origin cannot be reached (0: never).")
    var staleIfUnreachable: Int64 = 86_400

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "warning"

    mutating func validate() throws {
        guard OriginURL(origin) != nil else { throw ValidationError("--origin must be http://host:port, got \(origin)") }
        guard ListenAddress(listen) != nil else { throw ValidationError("--listen must be host:port, got \(listen)") }
        guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
        guard staleIfUnreachable >= 0 else { throw ValidationError("--stale-if-unreachable must not be negative") }
        if let redis {
            #if Redis
            guard ListenAddress(redis) != nil else { throw ValidationError("--redis must be host:port, got \(redis)") }
            #else
            throw ValidationError("--redis needs stash-proxy built with the Stash package's Redis trait")
            #endif
        }
    }

    /// How stash-proxy's client reaches the origin: no redirects followed (the client sees them),
    /// no decompression (bodies pass unchanged), up to 64 connections, a refused connection is a
    /// 502 at once instead of connection attempts repeated until the timeout, and a response whose
    /// bytes stop arriving for `readTimeout` fails (as nginx's `proxy_read_timeout`), so that an
    /// origin stalling mid-body ends in a 504 or a stale answer and the store stays unchanged.
    ///
    /// The read timeout is kept by the client's event loop, between two reads from the socket: the
    /// time a task waits for a thread does not count.
    ///
    /// An idle connection to the origin is closed after 4 s (AsyncHTTPClient's default is 60 s), below
    /// the shortest common keep-alive of origins (Node.js and Apache httpd close idle connections
    /// after 5 s): a request sent on a connection at the moment the origin closes it fails, or is
    /// repeated, which showed as a 502 or a duplicate request in the cache-tests suite's setup.
    static func originClientConfiguration(readTimeout: TimeAmount) -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.decompression = .disabled
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.connectionPool.idleTimeout = .seconds(4)
        // Apple platforms: Network.framework would wait for connectivity on a refused
        // connection; fail at once, as on Linux.
        configuration.networkFrameworkWaitForConnectivity = false
        configuration.timeout.read = readTimeout
        // The tool bootstraps no tracer, so AsyncHTTPClient's default (the global no-op one) would
        // only build each request's span attributes, parsing its URL again, to throw them away.
        configuration.tracing.tracer = nil
        return configuration
    }

    #if Redis
    /// The client of `--redis`'s server, or `nil` without the option.
    func makeRedisClient(logger: Logger) -> RedisClient? {
        redis.flatMap(ListenAddress.init).map { address in
            RedisClient(configuration: RedisConfiguration(host: address.host, port: address.port), logger: logger)
        }
    }

    /// The tier every proxy given the same `--redis` and `--redis-key-prefix` shares.
    func sharedTier(on client: RedisClient, logger: Logger) -> RedisCacheTier<HTTPCacheEntry> {
        RedisCacheTier(client: client, codec: .httpCacheEntry, configuration: .init(keyPrefix: redisKeyPrefix), logger: logger)
    }
    #endif

    func run() async throws {
        signal(SIGPIPE, SIG_IGN)
        var logger = Logger(label: "stash-proxy")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .warning
        let originURL = OriginURL(origin)!
        let address = ListenAddress(listen)!

        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: Self.originClientConfiguration(readTimeout: .seconds(timeout)))
        let fetcher = OriginFetcher(client: client, timeout: .seconds(timeout))
        let responder: any ProxyResponder
        var cacheConfiguration = HTTPCache.Configuration(mode: privateCache ? .private : .shared, directory: directory)
        cacheConfiguration.logger = logger
        cacheConfiguration.staleIfUnreachable = .seconds(staleIfUnreachable)
        #if Redis
        let redisClient = makeRedisClient(logger: logger)
        cacheConfiguration.remote = redisClient.map { sharedTier(on: $0, logger: logger) }
        #endif
        switch (self.client, noCache) {
        case (.urlSessionURLCache, _):
            responder = URLSessionResponder.plain(timeout: timeout)
        case (.urlSession, _):
            responder = URLSessionResponder.caching(try HTTPCache(configuration: cacheConfiguration), timeout: timeout)
        case (.asyncHTTPClient, true):
            responder = ForwardingResponder(fetcher: fetcher)
        case (.asyncHTTPClient, false):
            let cache = try HTTPCache(configuration: cacheConfiguration)
            responder = CachingResponder(client: CachingHTTPClient(client: client, cache: cache), timeout: .seconds(timeout))
        }
        let server = ProxyServer(
            host: address.host,
            port: address.port,
            originScheme: originURL.scheme,
            originAuthority: originURL.authority,
            responder: responder,
            maximumRequestBodySize: 64 << 20,
            logger: logger
        )
        do {
            try await server.run { port in
                print("stash-proxy listening on \(address.host):\(port), origin \(origin)")
                fflush(nil)
            }
        } catch {
            try? await client.shutdown()
            #if Redis
            await redisClient?.close()
            #endif
            throw error
        }
        try await client.shutdown()
        #if Redis
        await redisClient?.close()
        #endif
    }
}
#else
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Built without the `AsyncHTTPClient` package trait: says so and fails instead of serving.
@main
enum StashProxyUnavailable {
    static func main() {
        print("stash-proxy was built without the Stash package's AsyncHTTPClient trait: swift build --traits AsyncHTTPClient --product stash-proxy")
        exit(1)
    }
}
#endif  // AsyncHTTPClient
