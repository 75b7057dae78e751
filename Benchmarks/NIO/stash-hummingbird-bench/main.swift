#if Hummingbird
// stash-hummingbird-bench: StashHummingbird beside Hummingbird's own pieces, side by side in one run
// (docs/benchmarks.md, "Hummingbird"). A target of the root package, so that its release build
// reuses the modules scripts/http-bench/run.sh builds:
//
//   swift build -c release --scratch-path .build-release --enable-all-traits --product stash-hummingbird-bench
//   .build-release/release/stash-hummingbird-bench persist [--rounds N]
//   .build-release/release/stash-hummingbird-bench serve     # then drive it with wrk (scripts/server-bench/run.sh hummingbird)
//
// persist: a get hit of a small Codable value through StashPersistDriver (memory only, bounded)
// and through Hummingbird's MemoryPersistDriver (unbounded), interleaved rounds, medians.
// serve: an app on 127.0.0.1 with one handler that takes 1 ms (it sleeps: an I/O wait), at /plain/
// without a cache and at /cached/ behind HTTPCacheMiddleware (its response says max-age=3600), and
// /plain/instant answering the same 1 KB at once (the framework's floor); prints its port.
import Foundation
import Hummingbird
import BenchSupport
import StashHTTP
import StashHummingbird

struct Session: Codable, Sendable {
    var user: String
    var visits: Int
    var roles: [String]
}

/// Times gets of 1,000 keys through each driver, interleaved, and prints medians.
func persist(rounds: Int) async throws {
    let stash = try StashPersistDriver(memoryCountLimit: 10_000)
    let memory = MemoryPersistDriver()
    let session = Session(user: "ada", visits: 3, roles: ["admin", "editor"])
    for index in 0..<1_000 {
        try await stash.set(key: "session:\(index)", value: session, expires: .seconds(3600))
        try await memory.set(key: "session:\(index)", value: session, expires: .seconds(3600))
    }
    try await compareInterleaved(
        "PersistDriver get hit of a small Codable value, 1,000 keys",
        cases: [
            ("StashPersistDriver (memory, bounded)", { try await stash.get(key: "session:\($0 % 1_000)", as: Session.self)?.visits ?? 0 }),
            ("MemoryPersistDriver (Hummingbird)", { try await memory.get(key: "session:\($0 % 1_000)", as: Session.self)?.visits ?? 0 }),
        ],
        baseline: 1, rounds: rounds, operations: 50_000, expectedPerCall: 3)
}

/// Serves the 1 ms handler with and without the cache until interrupted.
func serve() async throws {
    let handler: @Sendable (Request, BasicRequestContext) async throws -> Response = { _, _ in
        try await Task.sleep(for: .milliseconds(1))
        var headers = HTTPFields()
        headers[.cacheControl] = "max-age=3600"
        headers[.contentType] = "text/plain"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(repeating: 0x61, count: 1024)))
    }
    let router = Router()
    router.get("/plain/report", use: handler)
    // The same response at once: the framework's own floor, beside which a cache hit is measured.
    router.get("/plain/instant") { _, _ in
        var headers = HTTPFields()
        headers[.contentType] = "text/plain"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(repeating: 0x61, count: 1024)))
    }
    router.group("/cached")
        .add(middleware: HTTPCacheMiddleware(cache: try HTTPCache(configuration: .init(mode: .shared))))
        .get("/report", use: handler)
    let app = Application(
        router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { channel in
            print("stash-hummingbird-bench serving on 127.0.0.1:\(channel.localAddress?.port ?? 0)")
            fflush(nil)
        })
    try await app.runService()
}

switch CommandLine.arguments.dropFirst().first {
case "persist": try await persist(rounds: requestedRounds)
case "serve": try await serve()
default:
    print("usage: stash-hummingbird-bench persist [--rounds N] | serve")
    exit(2)
}
#else
print("stash-hummingbird-bench needs the Hummingbird trait: swift build -c release --traits Hummingbird --product stash-hummingbird-bench")
#endif
