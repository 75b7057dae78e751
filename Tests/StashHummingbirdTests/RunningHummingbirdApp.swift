#if Hummingbird
import AsyncHTTPClient
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle
import StashTestSupport

/// Runs `app` on 127.0.0.1 and a port of its own for the length of `body`, which sends it requests
/// over HTTP; then shuts the app down gracefully and waits until it and its services have stopped
/// (a test can then check what their shutdown did).
///
/// HummingbirdTesting's `.live` mode does the same with a client whose read timeout is a fixed
/// 20 s: on a loaded 2-core machine running every suite at once, a request waited 30 s once (in a
/// Vapor app). Each request here is bounded by `defaultWaitTimeout`, as every wait of the tests is.
func withRunningApp<App: ApplicationProtocol>(
    _ app: App, _ body: (RunningHummingbirdApp) async throws -> Void
) async throws {
    let (ports, reportPort) = AsyncStream.makeStream(of: Int.self)
    let live = LiveApplication(base: app, reportPort: reportPort)
    let group = ServiceGroup(configuration: .init(services: [live], logger: Logger(label: "test-app")))
    try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask {
            defer { reportPort.finish() }  // also when the app fails before it listens
            try await group.run()
        }
        var iterator = ports.makeAsyncIterator()
        do {
            // Nil when the app stopped before it listened: its error is thrown below.
            if let port = await iterator.next() { try await body(RunningHummingbirdApp(port: port)) }
        } catch {
            await group.triggerGracefulShutdown()
            try? await tasks.waitForAll()
            throw error
        }
        await group.triggerGracefulShutdown()
        try await tasks.waitForAll()
    }
}

/// A client of an app run by ``withRunningApp(_:_:)``.
struct RunningHummingbirdApp: Sendable {
    /// The port the app listens on, on 127.0.0.1.
    let port: Int

    /// A response read whole.
    struct Answer: Sendable {
        var status: HTTPResponse.Status
        var headers: HTTPFields
        var body: ByteBuffer
    }

    /// Sends `method` `uri` (a path and query) with `headers` and `body`, and reads the whole answer
    /// (at most 16 MiB), within `defaultWaitTimeout`.
    func execute(uri: String, method: HTTPRequest.Method, headers: HTTPFields = [:], body: ByteBuffer? = nil) async throws -> Answer {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(uri)")
        request.method = .init(rawValue: method.rawValue)
        for field in headers { request.headers.add(name: field.name.rawName, value: field.value) }
        if let body { request.body = .bytes(body) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(Int64(defaultWaitTimeoutSeconds)))
        var fields = HTTPFields()
        for (name, value) in response.headers {
            if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
        }
        let bytes = try await response.body.collect(upTo: 16 << 20)
        return Answer(status: HTTPResponse.Status(code: Int(response.status.code)), headers: fields, body: bytes)
    }
}

/// `Base` listening on 127.0.0.1 and a free port, which it reports once it listens.
private struct LiveApplication<Base: ApplicationProtocol>: ApplicationProtocol, Service {
    let base: Base
    let reportPort: AsyncStream<Int>.Continuation

    var responder: Base.Responder {
        get async throws { try await base.responder }
    }
    var server: HTTPServerBuilder { base.server }
    var eventLoopGroup: any EventLoopGroup { base.eventLoopGroup }
    var configuration: ApplicationConfiguration { base.configuration.with(address: .hostname("127.0.0.1", port: 0)) }
    var logger: Logger { base.logger }
    var services: [any Service] { base.services }
    var processesRunBeforeServerStart: [@Sendable () async throws -> Void] { base.processesRunBeforeServerStart }

    @Sendable func onServerRunning(_ channel: any Channel) async {
        await base.onServerRunning(channel)
        if let port = channel.localAddress?.port { reportPort.yield(port) }
        reportPort.finish()
    }
}
#endif  // Hummingbird
