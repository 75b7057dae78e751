// swift-tools-version: 6.1
// Stash's libFuzzer targets: a package of their own, so that users never build them.
// Build and run one with `Fuzzing/run.sh TARGET SECONDS`; Fuzzing/README.md explains the layout.
//
// Every target is built with `-sanitize=fuzzer,address -enable-testing` passed by `-Xswiftc`, so
// that Stash's own modules are instrumented too and reachable through `@testable import`.
// The properties each target checks live in the root package's test targets
// (Tests/*/FuzzChecks), reached here through symlinks, so `swift test` replays the corpus
// through the same code. Package trait `Redis` (on by default) builds the targets that need
// SwiftNIO; `--disable-default-traits` builds the others only (the Redis targets then compile to a
// stub that says so), without fetching or building SwiftNIO.
import PackageDescription

/// The targets over the HTTP policy and store (no SwiftNIO).
let httpTargets = ["FuzzHTTPDate", "FuzzCacheControl", "FuzzHTTPCacheRules", "FuzzVary", "FuzzETag", "FuzzStoredEntry"]
/// The targets over the disk tier's inputs (no SwiftNIO).
let diskTargets = ["FuzzKeyNormalisation", "FuzzDiskEntry"]
/// The targets over the Redis tier's inputs (SwiftNIO, under the `Redis` trait).
let redisTargets = ["FuzzRESP", "FuzzRedisValueHeader", "FuzzRedisCluster"]
let withRedis: TargetDependencyCondition? = .when(traits: ["Redis"])

var targets: [Target] = [
    // libFuzzer's driver entry point, and what every target shares.
    .target(name: "CFuzzerDriver"),
    .target(name: "FuzzSupport", dependencies: ["CFuzzerDriver"]),
    .target(name: "HTTPChecks", dependencies: [
        .product(name: "StashHTTP", package: "Stash"),
        .product(name: "HTTPTypes", package: "swift-http-types"),
    ]),
]
targets += httpTargets.map { .executableTarget(name: $0, dependencies: ["HTTPChecks", "FuzzSupport"]) }
targets.append(.target(name: "DiskChecks", dependencies: [.product(name: "Stash", package: "Stash")]))
targets += diskTargets.map { .executableTarget(name: $0, dependencies: ["DiskChecks", "FuzzSupport"]) }
// The Redis checks are the root package's test files, which compile only under a `Redis` condition
// (`#if Redis`): this package's trait of that name defines it for its own targets.
targets.append(.target(name: "RedisChecks", dependencies: [
    .product(name: "StashRedis", package: "Stash", condition: withRedis),
    .product(name: "Stash", package: "Stash"),
    .product(name: "NIOCore", package: "swift-nio", condition: withRedis),
    .product(name: "Logging", package: "swift-log", condition: withRedis),
]))
targets += redisTargets.map { .executableTarget(name: $0, dependencies: ["RedisChecks", "FuzzSupport"]) }

let package = Package(
    name: "StashFuzzing",
    traits: [
        .trait(name: "Redis", description: "The Redis targets (FuzzRESP, FuzzRedisValueHeader, FuzzRedisCluster), on SwiftNIO."),
        .default(enabledTraits: ["Redis"]),
    ],
    dependencies: [
        // Only the root package's Redis trait, and only under this one's: nothing here needs
        // AsyncHTTPClient, which would otherwise be built (and instrumented) for nothing.
        .package(name: "Stash", path: "..", traits: [.trait(name: "Redis", condition: .when(traits: ["Redis"]))]),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
    ],
    targets: targets,
    swiftLanguageModes: [.v6]
)
