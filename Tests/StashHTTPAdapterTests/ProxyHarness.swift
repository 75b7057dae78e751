#if AsyncHTTPClient
import AsyncHTTPClient
import Logging
import NIOCore
import NIOHTTP1
import StashTestSupport
@testable import StashProxy

/// The bound of a request these tests expect to succeed: `defaultWaitTimeout`, for a loaded
/// 2-core machine running every suite at once (a 30-s bound once fired there). Tests of timeouts
/// pass their own, short ones.
let requestBound: TimeAmount = .seconds(Int64(defaultWaitTimeoutSeconds))

/// stash-proxy's server running in this process on 127.0.0.1 and a free port, in front of
/// `origin`; stop it with ``stop()``. Requests go through AsyncHTTPClient's shared client, which
/// needs no shutdown.
final class ProxyHarness: Sendable {
    let port: Int
    let client: HTTPClient
    private let task: Task<Void, any Error>

    var url: String { "http://127.0.0.1:\(port)" }

    /// The client the proxy under test reaches origins with, configured as stash-proxy's own with
    /// a read timeout of `defaultWaitTimeout` (a bound for a loaded machine). Static, so it lives as long as the test process and needs no shutdown.
    static let originClient = HTTPClient(
        eventLoopGroupProvider: .singleton,
        configuration: StashProxyCommand.originClientConfiguration(readTimeout: requestBound)
    )

    /// The same with a read timeout of 1 s, for the tests of an origin that stalls mid-body.
    static let stallGuardedOriginClient = HTTPClient(
        eventLoopGroupProvider: .singleton,
        configuration: StashProxyCommand.originClientConfiguration(readTimeout: .seconds(1))
    )

    init(origin: TestOrigin, responder: any ProxyResponder) async throws {
        let server = ProxyServer(
            host: "127.0.0.1",
            port: 0,
            originScheme: "http",
            originAuthority: "127.0.0.1:\(origin.port)",
            responder: responder,
            maximumRequestBodySize: 1 << 20,
            logger: Logger(label: "test-proxy")
        )
        (port, task) = try await server.start()
        client = HTTPClient.shared
    }

    /// Sends one request to the proxy and reads the whole body, within `defaultWaitTimeout`.
    func send(
        _ method: HTTPMethod = .GET,
        _ path: String,
        headers: [(String, String)] = [],
        body: String? = nil
    ) async throws -> (HTTPClientResponse, String) {
        var request = HTTPClientRequest(url: url + path)
        request.method = method
        request.headers = HTTPHeaders(headers)
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response = try await client.execute(request, timeout: requestBound)
        let bytes = try await response.body.collect(upTo: 1 << 24)
        return (response, String(buffer: bytes))
    }

    func stop() async throws {
        task.cancel()
        _ = await task.result
    }
}
#endif  // AsyncHTTPClient
