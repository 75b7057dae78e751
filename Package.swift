// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Stash",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "Stash", targets: ["Stash"]),
        .executable(name: "stash", targets: ["StashCLI"]),
        .library(name: "StashHTTP", targets: ["StashHTTP"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
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
        .testTarget(
            name: "StashHTTPTests",
            dependencies: ["StashHTTP", "Stash", .product(name: "HTTPTypes", package: "swift-http-types")]
        ),
        .testTarget(
            name: "StashTests",
            dependencies: ["Stash", "StressSupport", .product(name: "Logging", package: "swift-log")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
