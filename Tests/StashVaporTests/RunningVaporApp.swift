#if Vapor
import AsyncHTTPClient
import NIOCore
import StashTestSupport
import Testing
import Vapor

/// A Vapor app serving on 127.0.0.1 on a port of its own for the length of `body`, which sends it
/// requests over HTTP: the driver and the middleware are tested in a running server, as a user
/// runs them. (Vapor's own `.running` test mode starts and stops the server for each request;
/// tests that send requests concurrently need it to stay up.) The app is shut down afterwards,
/// running its lifecycle handlers.
func withRunningApp(
    configure: (Application) async throws -> Void,
    _ body: (RunningVaporApp) async throws -> Void
) async throws {
    let app = try await Application.make(.testing)
    do {
        try await configure(app)
        try await app.server.start(address: .hostname("127.0.0.1", port: 0))
        let port = try #require(app.http.server.shared.localAddress?.port)
        try await body(RunningVaporApp(app: app, port: port))
    } catch {
        await app.server.shutdown()
        try? await app.asyncShutdown()
        throw error
    }
    await app.server.shutdown()
    try await app.asyncShutdown()
}

/// A running app and a client of it.
struct RunningVaporApp {
    let app: Application
    let port: Int

    /// A response: its status, header fields and body.
    struct Answer {
        var status: HTTPResponseStatus
        var headers: HTTPHeaders
        var body: String
        var cacheStatus: String? { headers.first(name: "Cache-Status") }
    }

    /// Sends a request to `path` and reads the whole answer (at most 1 MiB), within
    /// `defaultWaitTimeout`: a bound for a loaded machine, not a timing the test asserts.
    func send(_ method: HTTPMethod = .GET, _ path: String, headers: HTTPHeaders = [:], body: String? = nil, client: HTTPClient = .shared) async throws -> Answer {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = method
        request.headers = headers
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response = try await client.execute(request, timeout: .seconds(Int64(defaultWaitTimeoutSeconds)))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return Answer(status: response.status, headers: response.headers, body: String(buffer: bytes))
    }
}
#endif  // Vapor
