import HTTPTypes
import Stash
@testable import StashHTTP

/// 2023-11-14 22:13:20 UTC, in seconds: the tests' "now" at the start.
let epochSeconds: Int64 = 1_700_000_000

/// A wall clock for tests, at `epochSeconds`.
func makeClock() -> ManualClock { ManualClock(start: epochSeconds * 1_000_000_000) }

/// `Date`-style text for `offset` seconds from the clock's current time.
func httpDate(_ clock: ManualClock, _ offset: Int64 = 0) -> String {
    HTTPDate.format(clock.nanosecondsNow / 1_000_000_000 + offset)
}

func makeRequest(
    _ path: String = "/resource", method: HTTPRequest.Method = .get, authority: String = "example.com",
    _ fields: [(String, String)] = []
) -> HTTPRequest {
    var request = HTTPRequest(method: method, scheme: "https", authority: authority, path: path)
    for (name, value) in fields { request.headerFields.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
    return request
}

func makeResponse(_ status: Int = 200, _ fields: [(String, String)]) -> HTTPResponse {
    var response = HTTPResponse(status: .init(code: status))
    for (name, value) in fields { response.headerFields.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
    return response
}

func makeCache(
    mode: HTTPCacheMode = .shared, clock: ManualClock, directory: String? = nil,
    configure: (inout HTTPCache.Configuration) -> Void = { _ in }
) throws -> HTTPCache {
    var configuration = HTTPCache.Configuration(mode: mode, directory: directory)
    configuration.clock = clock
    configure(&configuration)
    return try HTTPCache(configuration: configuration)
}

/// An origin in process: answers each request with `handler`, counting and recording the requests.
final class TestOrigin: @unchecked Sendable {
    // @unchecked Sendable: `requests` and `handler` are only touched with `lock` held.
    private let lock = Lock()
    private var recorded: [HTTPRequest] = []
    private var handler: @Sendable (HTTPRequest) throws -> (HTTPResponse, HTTPCacheBody)

    init(_ handler: @escaping @Sendable (HTTPRequest) throws -> (HTTPResponse, HTTPCacheBody)) {
        self.handler = handler
    }

    /// An origin that always answers `status`, `fields` and `body`.
    convenience init(_ status: Int = 200, _ fields: [(String, String)], body: String = "hello") {
        self.init { _ in (makeResponse(status, fields), HTTPCacheBody(bytes: Array(body.utf8))) }
    }

    func respond(_ handler: @escaping @Sendable (HTTPRequest) throws -> (HTTPResponse, HTTPCacheBody)) {
        lock.withLock { self.handler = handler }
    }

    func respond(_ status: Int = 200, _ fields: [(String, String)], body: String = "hello") {
        respond { _ in (makeResponse(status, fields), HTTPCacheBody(bytes: Array(body.utf8))) }
    }

    var requests: [HTTPRequest] { lock.withLock { recorded } }
    var count: Int { lock.withLock { recorded.count } }

    var closure: @Sendable (HTTPRequest, HTTPCacheBody?) async throws -> (HTTPResponse, HTTPCacheBody) {
        { request, _ in
            let handler = self.lock.withLock { () -> @Sendable (HTTPRequest) throws -> (HTTPResponse, HTTPCacheBody) in
                self.recorded.append(request)
                return self.handler
            }
            return try handler(request)
        }
    }
}

struct OriginDown: Error {}

extension HTTPCache {
    /// `response(for:policy:origin:)` with the body read whole, as text.
    func get(
        _ request: HTTPRequest, policy: HTTPCachePolicy = .useProtocolPolicy, _ origin: TestOrigin
    ) async throws -> (HTTPCacheResponse, String) {
        let result = try await response(for: request, policy: policy, origin: origin.closure)
        let bytes = try await result.body.collect(upTo: 1 << 30)
        return (result, String(decoding: bytes, as: UTF8.self))
    }
}
