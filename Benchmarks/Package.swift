// swift-tools-version: 6.1
// The Stash benchmarks: a package of their own, so that users of Stash never build
// the benchmark dependencies. Build with `swift build -c release --package-path Benchmarks`.
import PackageDescription

let package = Package(
    name: "StashBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        // The library under test, by path. Named so the products below resolve
        // whatever the checkout's folder is called.
        .package(name: "Stash", path: ".."),
        // The malloc interposer backs the allocation counts of the ordo-one suites.
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-collections", exact: "1.6.0"),
        // The DiskCache contenders log to a handler of their own (LogEvent: 1.16.2).
        .package(url: "https://github.com/apple/swift-log.git", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", exact: "1.8.0"),
    ],
    targets: [
        // The side-by-side comparison runner.
        .executableTarget(
            name: "stash-bench",
            dependencies: [
                "StashBenchKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The HTTP cache engine: a fresh hit against a plain MemoryCache lookup, a miss and a
        // revalidation, with an in-process origin (`stash-http-bench --help`).
        .executableTarget(
            name: "stash-http-bench",
            dependencies: [
                "BenchSupport",
                "StashBenchKit",
                .product(name: "Stash", package: "Stash"),
                .product(name: "StashHTTP", package: "Stash"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        // The get-or-load API: a hit through value(forKey:orLoad:) against a plain hit, and a
        // 1,000-caller stampede against the loader's own time (`stash-loading-bench --help`).
        .executableTarget(
            name: "stash-loading-bench",
            dependencies: [
                "BenchSupport",
                "StashBenchKit",
                .product(name: "Stash", package: "Stash"),
            ]
        ),
        // Contenders, workloads, trace replay, OPT and report rendering.
        .target(
            name: "StashBenchKit",
            dependencies: [
                "BenchSupport",
                "CStashBenchSupport",
                "CSQLiteBench",
                .product(name: "Stash", package: "Stash"),
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The one timing helper of every bench: a monotonic clock, one median, interleaved
        // rounds. The root package builds this folder too, for the benches in NIO/.
        .target(name: "BenchSupport"),
        // glibc's mallinfo2, which Swift's Glibc module does not export.
        .target(name: "CStashBenchSupport"),
        // The system SQLite, for the raw-SQLite disk baseline (the root package's
        // CSQLite is not a product, so it cannot be imported from here).
        .systemLibrary(
            name: "CSQLiteBench",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .testTarget(
            name: "StashBenchKitTests",
            dependencies: ["BenchSupport", "StashBenchKit"]
        ),
        // ordo-one/benchmark suites: `swift package benchmark` in this folder.
        .executableTarget(
            name: "MemoryCacheBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Stash", package: "Stash"),
            ],
            path: "Benchmarks/MemoryCacheBenchmarks",
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
