// swift-tools-version: 6.1
import PackageDescription

// The products built on SwiftNIO (the AsyncHTTPClient adapter, stash-proxy and the Redis tier)
// are left out when STASH_CORE_ONLY is set, and the AsyncHTTPClient adapter and stash-proxy
// alone when STASH_WITHOUT_HTTP_CLIENT is. Users never need them: a package that depends on the
// `Stash` or `StashHTTP` product builds no SwiftNIO either way. CI sets them for its sanitizer
// runs, which would otherwise instrument SwiftNIO, BoringSSL and AsyncHTTPClient once more each
// (docs/development.md).
let coreOnly = Context.environment["STASH_CORE_ONLY"] != nil
let withHTTPClient = Context.environment["STASH_WITHOUT_HTTP_CLIENT"] == nil

var products: [Product] = [
    .library(name: "Stash", targets: ["Stash"]),
    .executable(name: "stash", targets: ["StashCLI"]),
    .library(name: "StashHTTP", targets: ["StashHTTP"]),
    .library(name: "StashMetrics", targets: ["StashMetrics"]),
]

var dependencies: [Package.Dependency] = [
    .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
    .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
    .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
    .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
]

var targets: [Target] = [
        // SQLite from the system: Debian's libsqlite3-dev on Linux, the SDK on Apple platforms.
        .systemLibrary(
            name: "CSQLite",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .target(
            name: "Stash",
            dependencies: [
                "CSQLite",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "StashCLI",
            dependencies: [
                "Stash",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Test helper, not a product: writes to a cache in a loop, printing each
        // acknowledged operation, so the reliability tests can kill it at any point.
        .executableTarget(
            name: "stash-stress",
            dependencies: ["Stash", "StressSupport"],
            path: "Tests/StressHelper"
        ),
        // What the helper and the tests share: a seeded generator and the
        // self-describing value format.
        .target(
            name: "StressSupport",
            path: "Tests/StressSupport"
        ),
        // The RFC 9111 HTTP cache: the policy and the store. HTTPTypes only, no SwiftNIO.
        .target(
            name: "StashHTTP",
            dependencies: [
                "Stash",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // A cache's statistics exported through swift-metrics (CoreMetrics only, no SwiftNIO).
        .target(
            name: "StashMetrics",
            dependencies: ["Stash", .product(name: "CoreMetrics", package: "swift-metrics")]
        ),
        .testTarget(
            name: "StashMetricsTests",
            dependencies: ["StashMetrics", "Stash", .product(name: "MetricsTestKit", package: "swift-metrics")]
        ),
        .testTarget(
            name: "StashHTTPTests",
            dependencies: ["StashHTTP", "Stash", .product(name: "HTTPTypes", package: "swift-http-types")]
        ),
        .testTarget(
            name: "StashTests",
            dependencies: ["Stash", "StressSupport", .product(name: "Logging", package: "swift-log")]
        ),
]

if !coreOnly {
    products += [
        .library(name: "StashRedis", targets: ["StashRedis"]),
    ]
    dependencies += [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
    ]
    targets += [
            // The shared tier on Redis: a RESP client on SwiftNIO, Redis Cluster, and the tier.
            .target(
                name: "StashRedis",
                dependencies: [
                    "Stash",
                    .product(name: "NIOCore", package: "swift-nio"),
                    .product(name: "NIOPosix", package: "swift-nio"),
                    .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                    .product(name: "NIOSSL", package: "swift-nio-ssl"),
                    .product(name: "Logging", package: "swift-log"),
                ]
            ),
            // Not a product: the client side of scripts/redis/bench.sh (beside redis-benchmark).
            .executableTarget(
                name: "stash-redis-bench",
                dependencies: [
                    "StashRedis",
                    "Stash",
                    .product(name: "NIOCore", package: "swift-nio"),
                ],
                path: "scripts/redis/Bench"
            ),
            // Test helper, not a product: a second process with its own Cache on a shared
            // Redis, driven on stdin by StashRedisTests.
            .executableTarget(
                name: "stash-redis-peer",
                dependencies: ["StashRedis", "Stash"],
                path: "Tests/RedisPeerHelper"
            ),
            .testTarget(
                name: "StashRedisTests",
                dependencies: [
                    "StashRedis",
                    "Stash",
                    .product(name: "NIOCore", package: "swift-nio"),
                    .product(name: "NIOPosix", package: "swift-nio"),
                    .product(name: "NIOEmbedded", package: "swift-nio"),
                    .product(name: "NIOSSL", package: "swift-nio-ssl"),
                    .product(name: "Logging", package: "swift-log"),
                ]
            ),
    ]
}

if !coreOnly && withHTTPClient {
    products += [
        .library(name: "StashAsyncHTTPClient", targets: ["StashAsyncHTTPClient"]),
        .executable(name: "stash-proxy", targets: ["StashProxy"]),
    ]
    dependencies += [
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
    ]
    targets += [
            // The AsyncHTTPClient adapter: an HTTPClient whose requests go through an HTTPCache.
            .target(
                name: "StashAsyncHTTPClient",
                dependencies: [
                    "StashHTTP",
                    .product(name: "HTTPTypes", package: "swift-http-types"),
                    .product(name: "AsyncHTTPClient", package: "async-http-client"),
                    .product(name: "NIOCore", package: "swift-nio"),
                    .product(name: "NIOHTTP1", package: "swift-nio"),
                    .product(name: "Logging", package: "swift-log"),
                ]
            ),
            // The caching reverse proxy: a SwiftNIO HTTP/1.1 server in front of the client adapter.
            .executableTarget(
                name: "StashProxy",
                dependencies: [
                    "StashAsyncHTTPClient",
                    "StashHTTP",
                    .product(name: "HTTPTypes", package: "swift-http-types"),
                    .product(name: "AsyncHTTPClient", package: "async-http-client"),
                    .product(name: "NIOCore", package: "swift-nio"),
                    .product(name: "NIOPosix", package: "swift-nio"),
                    .product(name: "NIOHTTP1", package: "swift-nio"),
                    .product(name: "ArgumentParser", package: "swift-argument-parser"),
                    .product(name: "Logging", package: "swift-log"),
                ]
            ),
            // Not a product: CachingHTTPClient's hits and revalidations against an origin on
            // 127.0.0.1, beside a MemoryCache lookup and a plain HTTPClient fetch (docs/benchmarks.md).
            .executableTarget(
                name: "stash-http-client-bench",
                dependencies: [
                    "StashAsyncHTTPClient",
                    "StashHTTP",
                    "Stash",
                    .product(name: "AsyncHTTPClient", package: "async-http-client"),
                    .product(name: "NIOCore", package: "swift-nio"),
                    .product(name: "NIOHTTP1", package: "swift-nio"),
                    .product(name: "NIOPosix", package: "swift-nio"),
                    .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                ],
                path: "scripts/http-bench/ClientBench"
            ),
            // Integration tests of the client adapter and stash-proxy against a real origin on 127.0.0.1.
            .testTarget(
                name: "StashHTTPAdapterTests",
                dependencies: [
                    "StashAsyncHTTPClient",
                    "StashProxy",
                    "StashHTTP",
                    .product(name: "HTTPTypes", package: "swift-http-types"),
                    .product(name: "AsyncHTTPClient", package: "async-http-client"),
                    .product(name: "NIOCore", package: "swift-nio"),
                    .product(name: "NIOPosix", package: "swift-nio"),
                    .product(name: "NIOHTTP1", package: "swift-nio"),
                    .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                ]
            ),
    ]
}

let package = Package(
    name: "Stash",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: products,
    dependencies: dependencies,
    targets: targets,
    swiftLanguageModes: [.v6]
)
