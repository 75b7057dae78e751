#if Vapor
// stash-vapor-bench: StashVapor beside Vapor's own pieces, side by side in one run
// (docs/benchmarks.md, "Vapor"). A target of the root package, so that its release build reuses
// the modules scripts/http-bench/run.sh builds:
//
//   swift build -c release --scratch-path .build-release --enable-all-traits --product stash-vapor-bench
//   .build-release/release/stash-vapor-bench cache [--rounds N]
//   .build-release/release/stash-vapor-bench serve     # then drive it with wrk (scripts/server-bench/run.sh vapor)
//
// cache: a get hit of a small Codable value through `app.cache` (Vapor's `Cache` API, async, as a
// route calls it) with `.stash(countLimit:)` (bounded) and with Vapor's `.memory` (unbounded),
// and through StashVaporCache called as itself (no future); interleaved rounds, medians.
// serve: an app on 127.0.0.1 with one handler that takes 1 ms (it sleeps: an I/O wait), at /plain/
// without a cache and at /cached/ behind HTTPCacheMiddleware (its response says max-age=3600), and
// /plain/instant answering the same 1 KB at once (the framework's floor); prints its port.
import Foundation
import BenchSupport
import StashHTTP
import StashVapor
import Vapor

struct Session: Codable, Sendable {
    var user: String
    var visits: Int
    var roles: [String]
}

/// An app with no request logging (as Hummingbird's bench app has none), errors only in the log.
func makeApp() async throws -> Application {
    let app = try await Application.make(.production)
    app.logger.logLevel = .error
    app.middleware = Middlewares()
    app.middleware.use(ErrorMiddleware.default(environment: app.environment))
    return app
}

/// Times gets of 1,000 keys through each cache, interleaved, and prints medians.
func cache(rounds: Int) async throws {
    let app = try await makeApp()
    app.caches.use(.stash(countLimit: 10_000))
    let stash = app.cache
    let direct = app.caches.stash
    let memory = app.caches.memory
    let session = Session(user: "ada", visits: 3, roles: ["admin", "editor"])
    for index in 0..<1_000 {
        try await stash.set("session:\(index)", to: session, expiresIn: .hours(1))
        try await memory.set("session:\(index)", to: session, expiresIn: .hours(1))
    }
    try await compareInterleaved(
        "Vapor Cache get hit of a small Codable value, 1,000 keys",
        cases: [
            ("app.cache, .stash (bounded)", { try await stash.get("session:\($0 % 1_000)", as: Session.self)?.visits ?? 0 }),
            ("app.cache, .memory (Vapor)", { try await memory.get("session:\($0 % 1_000)", as: Session.self)?.visits ?? 0 }),
            ("StashVaporCache, called as itself", { try await direct.get("session:\($0 % 1_000)", as: Session.self)?.visits ?? 0 }),
        ],
        baseline: 1, rounds: rounds, operations: 50_000, expectedPerCall: 3)
    try await app.asyncShutdown()
}

/// Serves the 1 ms handler with and without the cache until killed.
func serve() async throws {
    let app = try await makeApp()
    let report: @Sendable (Request) async throws -> Response = { _ in
        try await Task.sleep(for: .milliseconds(1))
        let response = Response(body: .init(buffer: ByteBuffer(repeating: 0x61, count: 1024)))
        response.headers.replaceOrAdd(name: .cacheControl, value: "max-age=3600")
        response.headers.replaceOrAdd(name: .contentType, value: "text/plain")
        return response
    }
    app.get("plain", "report", use: report)
    // The same response at once: the framework's own floor, beside which a cache hit is measured.
    app.get("plain", "instant") { _ in
        let response = Response(body: .init(buffer: ByteBuffer(repeating: 0x61, count: 1024)))
        response.headers.replaceOrAdd(name: .contentType, value: "text/plain")
        return response
    }
    app.grouped("cached").grouped(HTTPCacheMiddleware(cache: try HTTPCache(configuration: .init(mode: .shared))))
        .get("report", use: report)
    try await app.server.start(address: .hostname("127.0.0.1", port: 0))
    print("stash-vapor-bench serving on 127.0.0.1:\(app.http.server.shared.localAddress?.port ?? 0)")
    fflush(nil)
    while true { try await Task.sleep(for: .seconds(3600)) }
}

switch CommandLine.arguments.dropFirst().first {
case "cache": try await cache(rounds: requestedRounds)
case "serve": try await serve()
default:
    print("usage: stash-vapor-bench cache [--rounds N] | serve")
    exit(2)
}
#else
print("stash-vapor-bench needs the Vapor trait: swift build -c release --traits Vapor --product stash-vapor-bench")
#endif
