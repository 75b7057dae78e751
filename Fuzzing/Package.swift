// swift-tools-version: 6.1
// Stash's libFuzzer targets: a package of its own, so that users never build it.
// Build and run with `Fuzzing/run.sh TARGET SECONDS` (Fuzzing/README.md).
import PackageDescription

let package = Package(
    name: "StashFuzzing",
    dependencies: [
        .package(name: "Stash", path: ".."),
    ],
    targets: [
        // libFuzzer's driver entry point, and what every target shares.
        .target(name: "CFuzzerDriver"),
        .target(name: "FuzzSupport", dependencies: ["CFuzzerDriver"]),
        .target(
            name: "HTTPChecks",
            dependencies: [.product(name: "StashHTTP", package: "Stash")]
        ),
        .executableTarget(
            name: "FuzzHTTPDate",
            dependencies: ["HTTPChecks", "FuzzSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
