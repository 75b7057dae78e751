// swift-tools-version: 6.1
// Stash's libFuzzer targets: a package of their own, so that users never build them.
// Build and run one with `Fuzzing/run.sh TARGET SECONDS`; Fuzzing/README.md explains the layout.
//
// Every target is built with `-sanitize=fuzzer,address -enable-testing` passed by `-Xswiftc`, so
// that Stash's own modules are instrumented too and reachable through `@testable import`.
// The properties each target checks live in the root package's test targets
// (Tests/*/FuzzChecks), reached here through symlinks, so `swift test` replays the corpus
// through the same code. With STASH_CORE_ONLY set, the targets that need SwiftNIO are left out.
import PackageDescription

let coreOnly = Context.environment["STASH_CORE_ONLY"] != nil

/// The targets over the HTTP policy and store (no SwiftNIO).
let httpTargets = ["FuzzHTTPDate", "FuzzCacheControl", "FuzzHTTPCacheRules", "FuzzVary", "FuzzETag", "FuzzStoredEntry"]
/// The targets over the disk tier's inputs (no SwiftNIO).
let diskTargets = ["FuzzKeyNormalisation", "FuzzDiskEntry"]
/// The targets over the Redis tier's inputs (SwiftNIO).
let redisTargets = coreOnly ? [] : ["FuzzRESP", "FuzzRedisValueHeader", "FuzzRedisCluster"]

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
if !coreOnly {
    // The Redis checks are the root package's test files, which compile only under its `Redis`
    // trait (`#if Redis`); this package defines the condition for them.
    targets.append(.target(name: "RedisChecks", dependencies: [
        .product(name: "StashRedis", package: "Stash"),
        .product(name: "Stash", package: "Stash"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "Logging", package: "swift-log"),
    ], swiftSettings: [.define("Redis")]))
    targets += redisTargets.map { .executableTarget(name: $0, dependencies: ["RedisChecks", "FuzzSupport"]) }
}

var dependencies: [Package.Dependency] = [
    // Only the Redis trait: the Redis targets need StashRedis, and nothing here needs
    // AsyncHTTPClient, which would otherwise be built (and instrumented) for nothing.
    .package(name: "Stash", path: "..", traits: coreOnly ? [] : ["Redis"]),
    .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
]
if !coreOnly {
    dependencies += [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
    ]
}

let package = Package(
    name: "StashFuzzing",
    dependencies: dependencies,
    targets: targets,
    swiftLanguageModes: [.v6]
)
