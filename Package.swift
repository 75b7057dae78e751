// swift-tools-version: 6.1
import PackageDescription

// Six package traits put the integrations behind a switch (docs/development.md):
//
// - `Redis`: the `StashRedis` product (a RESP client on SwiftNIO and swift-nio-ssl);
// - `AsyncHTTPClient`: the `StashAsyncHTTPClient` product and the `stash-proxy` executable
//   (AsyncHTTPClient, SwiftNIO);
// - `Hummingbird`: the `StashHummingbird` product (Hummingbird 2; turns `ServiceLifecycle` on);
// - `OpenAPI`: the `StashOpenAPI` product (swift-openapi-runtime, no SwiftNIO);
// - `Vapor`: the `StashVapor` product (Vapor 4);
// - `ServiceLifecycle`: the `Service` conformances of the types with background work
//   (swift-service-lifecycle, no SwiftNIO).
//
// All are off by default, so that a package that depends on Stash without naming traits resolves,
// fetches and builds none of SwiftNIO, swift-nio-ssl, AsyncHTTPClient, Hummingbird,
// swift-openapi-runtime, Vapor or their dependencies: every use of them below is conditional on a
// trait (docs/benchmarks.md, "Build cost"). A user of an integration names its trait:
// `.package(url: ..., traits: ["Vapor"])`. In this repository, `swift build --enable-all-traits` and
// `swift test --enable-all-traits` build and test everything (README, "On a fresh machine").
// SwiftPM cannot leave a target out by trait, so the targets stay and every file in them is
// wrapped in `#if Redis`, `#if AsyncHTTPClient`, `#if Hummingbird`, `#if Vapor` or `#if OpenAPI`:
// without its trait a target compiles to nothing. CI's sanitizer runs use that (no traits, and
// `--traits Redis` for the Redis suites) so as not to instrument SwiftNIO, BoringSSL,
// AsyncHTTPClient, Hummingbird or Vapor.

/// A SwiftNIO product of a target that needs it only with `trait` on.
func nio(_ name: String, when traits: Set<String>) -> Target.Dependency {
    .product(name: name, package: "swift-nio", condition: .when(traits: traits))
}

let redis: Set<String> = ["Redis"]
let httpClient: Set<String> = ["AsyncHTTPClient"]
let hummingbird: Set<String> = ["Hummingbird"]
let openAPI: Set<String> = ["OpenAPI"]
let vapor: Set<String> = ["Vapor"]
let serviceLifecycle: Set<String> = ["ServiceLifecycle"]
let serviceLifecycleProduct: Target.Dependency = .product(
    name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: serviceLifecycle))

let package = Package(
    name: "Stash",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "Stash", targets: ["Stash"]),
        .executable(name: "stash", targets: ["StashCLI"]),
        .library(name: "StashHTTP", targets: ["StashHTTP"]),
        .library(name: "StashMetrics", targets: ["StashMetrics"]),
        .library(name: "StashURLSession", targets: ["StashURLSession"]),
        // Empty without the `Redis` trait.
        .library(name: "StashRedis", targets: ["StashRedis"]),
        // Empty, and an executable that only says what it needs, without the `AsyncHTTPClient` trait.
        .library(name: "StashAsyncHTTPClient", targets: ["StashAsyncHTTPClient"]),
        .executable(name: "stash-proxy", targets: ["StashProxy"]),
        // Empty without the `Hummingbird` trait.
        .library(name: "StashHummingbird", targets: ["StashHummingbird"]),
        // Empty without the `OpenAPI` trait.
        .library(name: "StashOpenAPI", targets: ["StashOpenAPI"]),
        // Empty without the `Vapor` trait.
        .library(name: "StashVapor", targets: ["StashVapor"]),
    ],
    traits: [
        .trait(
            name: "Redis",
            description: "The StashRedis product: a shared cache tier on Redis (SwiftNIO, swift-nio-ssl)."
        ),
        .trait(
            name: "AsyncHTTPClient",
            description: "The StashAsyncHTTPClient product and stash-proxy (AsyncHTTPClient, SwiftNIO)."
        ),
        .trait(
            name: "Hummingbird",
            description: "The StashHummingbird product: a PersistDriver and an HTTP response-cache middleware for Hummingbird 2 (and ServiceLifecycle, which Hummingbird apps run their services with).",
            enabledTraits: ["ServiceLifecycle"]
        ),
        .trait(
            name: "OpenAPI",
            description: "The StashOpenAPI product: a swift-openapi-runtime ClientMiddleware on an HTTPCache (no SwiftNIO)."
        ),
        .trait(
            name: "Vapor",
            description: "The StashVapor product: a Vapor 4 Cache driver and an HTTP response-cache middleware."
        ),
        .trait(
            name: "ServiceLifecycle",
            description: "Service conformances (swift-service-lifecycle, no SwiftNIO) for every Stash type with background work: MemoryCache, DiskCache, Cache, HTTPCache, and with Redis, RedisClient, RedisClusterClient and RedisCacheTier."
        ),
        // None by default: a dependent that names no traits fetches 4 packages, not 32.
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.0"),
        .package(url: "https://github.com/apple/swift-async-algorithms.git", from: "1.0.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.8.0"),
        .package(url: "https://github.com/vapor/vapor.git", from: "4.122.0"),
    ],
    targets: [
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
                serviceLifecycleProduct,
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
            dependencies: ["Stash", "StressSupport", "StashTestSupport"],
            path: "Tests/StressHelper"
        ),
        // What the helper and the reliability tests share: the self-describing value format.
        .target(
            name: "StressSupport",
            dependencies: ["StashTestSupport"],
            path: "Tests/StressSupport"
        ),
        // Not a product: the one timing helper of every bench (a monotonic clock, one median,
        // interleaved rounds), shared with the Benchmarks package, whose folder it lives in. The
        // benches on SwiftNIO (Benchmarks/NIO) are targets of this package so that CI's one debug
        // build compiles them; Benchmarks/README.md says why.
        .target(
            name: "BenchSupport",
            path: "Benchmarks/Sources/BenchSupport"
        ),
        // Not a product: what every test target shares (a seeded generator, temporary
        // directories, a recording log handler, bounded waits).
        .target(
            name: "StashTestSupport",
            dependencies: ["Stash", .product(name: "Logging", package: "swift-log")],
            path: "Tests/StashTestSupport"
        ),
        // The RFC 9111 HTTP cache: the policy and the store. HTTPTypes only, no SwiftNIO.
        .target(
            name: "StashHTTP",
            dependencies: [
                "Stash",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                serviceLifecycleProduct,
            ]
        ),
        // URLSession through the HTTP cache: a caching session and a URLProtocol. Foundation
        // (FoundationNetworking on Linux) and HTTPTypesFoundation only, no SwiftNIO.
        .target(
            name: "StashURLSession",
            dependencies: [
                "Stash",
                "StashHTTP",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HTTPTypesFoundation", package: "swift-http-types"),
            ]
        ),
        // A cache's statistics exported through swift-metrics (CoreMetrics only, no SwiftNIO).
        .target(
            name: "StashMetrics",
            dependencies: ["Stash", .product(name: "CoreMetrics", package: "swift-metrics")]
        ),
        .testTarget(
            name: "StashMetricsTests",
            dependencies: ["StashMetrics", "Stash", "StashTestSupport", .product(name: "MetricsTestKit", package: "swift-metrics")]
        ),
        .testTarget(
            name: "StashHTTPTests",
            dependencies: ["StashHTTP", "Stash", "StashTestSupport", .product(name: "HTTPTypes", package: "swift-http-types")]
        ),
        .testTarget(
            name: "StashTests",
            dependencies: ["Stash", "StressSupport", "StashTestSupport", .product(name: "Logging", package: "swift-log"), serviceLifecycleProduct]
        ),

        // --- Trait `Redis` ---------------------------------------------------------------
        // The shared tier on Redis: a RESP client on SwiftNIO, Redis Cluster, and the tier.
        .target(
            name: "StashRedis",
            dependencies: [
                "Stash",
                nio("NIOCore", when: redis),
                nio("NIOPosix", when: redis),
                nio("NIOConcurrencyHelpers", when: redis),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: redis)),
                .product(name: "Logging", package: "swift-log"),
                serviceLifecycleProduct,
            ]
        ),
        // Not a product: the client side of scripts/redis/bench.sh (beside redis-benchmark).
        .executableTarget(
            name: "stash-redis-bench",
            dependencies: [
                "BenchSupport",
                "StashRedis",
                "Stash",
                nio("NIOCore", when: redis),
            ],
            path: "Benchmarks/NIO/stash-redis-bench"
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
                "StashHTTP",
                "StashProxy",
                "StashAsyncHTTPClient",
                "StashHummingbird",
                "StashTestSupport",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: httpClient)),
                // StashPersistDriver on a Redis tier (PersistDriverWithRedisTests).
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: hummingbird)),
                nio("NIOHTTP1", when: httpClient),
                nio("NIOCore", when: redis),
                nio("NIOPosix", when: redis),
                nio("NIOEmbedded", when: redis),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: redis)),
                .product(name: "Logging", package: "swift-log"),
                serviceLifecycleProduct,
            ]
        ),

        // --- Trait `AsyncHTTPClient` -----------------------------------------------------
        // The AsyncHTTPClient adapter: an HTTPClient whose requests go through an HTTPCache.
        .target(
            name: "StashAsyncHTTPClient",
            dependencies: [
                "StashHTTP",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: httpClient)),
                nio("NIOCore", when: httpClient),
                nio("NIOHTTP1", when: httpClient),
                // The one bridge between NIO's HTTP/1 types and HTTPTypes; AsyncHTTPClient depends on
                // swift-nio-extras already.
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras", condition: .when(traits: httpClient)),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The caching reverse proxy: a SwiftNIO HTTP/1.1 server in front of the client adapter.
        .executableTarget(
            name: "StashProxy",
            dependencies: [
                "Stash",
                "StashAsyncHTTPClient",
                "StashHTTP",
                "StashRedis",
                "StashURLSession",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HTTPTypesFoundation", package: "swift-http-types"),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: httpClient)),
                nio("NIOCore", when: httpClient),
                nio("NIOPosix", when: httpClient),
                nio("NIOHTTP1", when: httpClient),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras", condition: .when(traits: httpClient)),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Not a product: CachingHTTPClient's hits and revalidations against an origin on
        // 127.0.0.1, beside a MemoryCache lookup and a plain HTTPClient fetch (docs/benchmarks.md).
        .executableTarget(
            name: "stash-http-client-bench",
            dependencies: [
                "BenchSupport",
                "StashAsyncHTTPClient",
                "StashURLSession",
                "StashHTTP",
                "Stash",
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: httpClient)),
                nio("NIOCore", when: httpClient),
                nio("NIOHTTP1", when: httpClient),
                nio("NIOPosix", when: httpClient),
                nio("NIOConcurrencyHelpers", when: httpClient),
            ],
            path: "Benchmarks/NIO/stash-http-client-bench"
        ),
        // Integration tests of the client adapter and stash-proxy against a real origin on 127.0.0.1.
        .testTarget(
            name: "StashHTTPAdapterTests",
            dependencies: [
                "StashAsyncHTTPClient",
                "StashURLSession",
                "StashOpenAPI",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime", condition: .when(traits: openAPI)),
                .product(name: "HTTPTypesFoundation", package: "swift-http-types"),
                "StashProxy",
                "StashHTTP",
                "StashTestSupport",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: httpClient)),
                nio("NIOCore", when: httpClient),
                nio("NIOPosix", when: httpClient),
                nio("NIOHTTP1", when: httpClient),
                nio("NIOConcurrencyHelpers", when: httpClient),
            ]
        ),

        // --- Trait `OpenAPI` -------------------------------------------------------------
        // A generated OpenAPI client's calls through an HTTPCache (swift-openapi-runtime only).
        .target(
            name: "StashOpenAPI",
            dependencies: [
                "StashHTTP",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime", condition: .when(traits: openAPI)),
            ]
        ),

        // --- Trait `Hummingbird` ---------------------------------------------------------
        // Stash in a Hummingbird 2 server: a PersistDriver on a Cache, and a response-cache
        // middleware on an HTTPCache.
        .target(
            name: "StashHummingbird",
            dependencies: [
                "Stash",
                "StashHTTP",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: hummingbird)),
                // For StoredDateChannelHandler; Hummingbird's own server is built on both.
                nio("NIOCore", when: hummingbird),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras", condition: .when(traits: hummingbird)),
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms", condition: .when(traits: hummingbird)),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: hummingbird)),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Not a product: the conformance harness of the middleware (scripts/http-conformance/run.sh
        // hummingbird), a Hummingbird app forwarding to one origin.
        .executableTarget(
            name: "stash-hummingbird-proxy",
            dependencies: [
                "StashHummingbird",
                "StashAsyncHTTPClient",
                "StashHTTP",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: hummingbird)),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: hummingbird)),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                nio("NIOCore", when: hummingbird),
            ],
            path: "scripts/http-conformance/HummingbirdProxy"
        ),
        // Not a product: the example app of StashHummingbird's "Using Stash in a Hummingbird server" article,
        // compiled with the package so that the article's code stays true.
        .executableTarget(
            name: "stash-hummingbird-example",
            dependencies: [
                "StashHummingbird",
                "StashHTTP",
                "StashMetrics",
                "StashRedis",
                "Stash",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: hummingbird)),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: hummingbird)),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Examples/HummingbirdApp"
        ),
        // Not a product: StashHummingbird beside Hummingbird's own pieces (scripts/server-bench/run.sh hummingbird).
        .executableTarget(
            name: "stash-hummingbird-bench",
            dependencies: [
                "BenchSupport",
                "StashHummingbird",
                "StashHTTP",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: hummingbird)),
            ],
            path: "Benchmarks/NIO/stash-hummingbird-bench"
        ),
        // The driver and the middleware in running Hummingbird apps on 127.0.0.1.
        .testTarget(
            name: "StashHummingbirdTests",
            dependencies: [
                "StashHummingbird",
                "Stash",
                "StashHTTP",
                "StashTestSupport",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: hummingbird)),
                .product(name: "HummingbirdCore", package: "hummingbird", condition: .when(traits: hummingbird)),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: hummingbird)),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                serviceLifecycleProduct,
                nio("NIOCore", when: hummingbird),
            ]
        ),

        // --- Trait `Vapor` ---------------------------------------------------------------
        // Stash in a Vapor 4 server: a Cache driver on a Stash Cache, and a response-cache
        // middleware on an HTTPCache.
        .target(
            name: "StashVapor",
            dependencies: [
                "Stash",
                "StashHTTP",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Vapor", package: "vapor", condition: .when(traits: vapor)),
                // The one bridge between NIO's HTTP/1 types and HTTPTypes; Vapor depends on
                // swift-nio-extras already.
                nio("NIOHTTP1", when: vapor),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras", condition: .when(traits: vapor)),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Not a product: the example app of StashVapor's "Using Stash in a Vapor server" article,
        // compiled with the package so that the article's code stays true.
        .executableTarget(
            name: "stash-vapor-example",
            dependencies: [
                "StashVapor",
                "StashHTTP",
                "StashMetrics",
                "StashRedis",
                "Stash",
                .product(name: "Vapor", package: "vapor", condition: .when(traits: vapor)),
            ],
            path: "Examples/VaporApp"
        ),
        // Not a product: StashVapor beside Vapor's own pieces (scripts/server-bench/run.sh vapor).
        .executableTarget(
            name: "stash-vapor-bench",
            dependencies: [
                "BenchSupport",
                "StashVapor",
                "StashHTTP",
                .product(name: "Vapor", package: "vapor", condition: .when(traits: vapor)),
            ],
            path: "Benchmarks/NIO/stash-vapor-bench"
        ),
        // The driver and the middleware in running Vapor apps on 127.0.0.1 (requests sent with
        // AsyncHTTPClient, which Vapor depends on).
        .testTarget(
            name: "StashVaporTests",
            dependencies: [
                "StashVapor",
                "Stash",
                "StashHTTP",
                "StashTestSupport",
                .product(name: "Vapor", package: "vapor", condition: .when(traits: vapor)),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: vapor)),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                nio("NIOCore", when: vapor),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
