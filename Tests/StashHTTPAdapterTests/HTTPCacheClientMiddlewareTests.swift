#if AsyncHTTPClient && OpenAPI
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Foundation
import HTTPTypes
import HTTPTypesFoundation
import NIOHTTP1
import OpenAPIRuntime
import Stash
import StashHTTP
import StashOpenAPI
import Testing

/// `HTTPCacheClientMiddleware` in a hand-written OpenAPI client (it calls its middlewares and its
/// transport as generated code does), over URLSession, against the real test origin on 127.0.0.1.
@Suite(.timeLimit(.minutes(5))) struct HTTPCacheClientMiddlewareTests {
    struct Fixture {
        let origin: TestOrigin
        let clock = ManualClock(start: 1_800_000_000_000_000_000)
        let client: PetsClient

        init(respond: @escaping @Sendable (TestOrigin.Received) -> TestOrigin.Reply) async throws {
            origin = try await TestOrigin(respond: respond)
            var configuration = HTTPCache.Configuration(mode: .private)
            configuration.clock = clock
            let middleware = HTTPCacheClientMiddleware(cache: try HTTPCache(configuration: configuration))
            client = PetsClient(serverURL: URL(string: origin.url + "/api/v1")!, middlewares: [middleware], transport: TestTransport())
        }
    }

    @Test func aFreshResponseIsServedWithoutTheTransport() async throws {
        let fixture = try await Fixture { request in
            .response(headers: [("Cache-Control", "max-age=60"), ("Content-Type", "application/json")], body: "{\"uri\":\"\(request.uri)\"}")
        }
        let first = try await fixture.client.getPet(id: 1)
        fixture.clock.advance(by: .seconds(3))
        let second = try await fixture.client.getPet(id: 1)
        let other = try await fixture.client.getPet(id: 2)
        try await fixture.origin.stop()

        #expect(first.body == "{\"uri\":\"/api/v1/pets/1\"}")
        #expect(first.response.headerFields[HTTPField.Name("Cache-Status")!] == "Stash; fwd=uri-miss")
        #expect(second.body == first.body)
        #expect(second.response.headerFields[HTTPField.Name("Cache-Status")!] == "Stash; hit")
        #expect(second.response.headerFields[.age] == "3")
        #expect(other.body == "{\"uri\":\"/api/v1/pets/2\"}")
        #expect(fixture.origin.received.map(\.uri) == ["/api/v1/pets/1", "/api/v1/pets/2"])
    }

    @Test func aStaleResponseIsRevalidatedWithItsETag() async throws {
        let fixture = try await Fixture { request in
            request.headers["If-None-Match"] == ["\"v1\""]
                ? .response(status: .notModified, headers: [("ETag", "\"v1\""), ("Cache-Control", "max-age=10")])
                : .response(headers: [("ETag", "\"v1\""), ("Cache-Control", "max-age=10")], body: "pet one")
        }
        _ = try await fixture.client.getPet(id: 1)
        fixture.clock.advance(by: .seconds(11))
        let revalidated = try await fixture.client.getPet(id: 1)
        try await fixture.origin.stop()

        #expect(revalidated.response.status == .ok)
        #expect(revalidated.body == "pet one")
        #expect(revalidated.response.headerFields[HTTPField.Name("Cache-Status")!] == "Stash; fwd=stale; fwd-status=304")
        #expect(fixture.origin.received.last?.headers["If-None-Match"] == ["\"v1\""])
    }

    @Test func anUpdateGoesThroughAndDropsTheStoredResponse() async throws {
        let version = LockedValue(1)
        let fixture = try await Fixture { request in
            if request.method == "PUT" {
                version.withLock { $0 += 1 }
                return .response(body: "updated to \(request.body)")
            }
            return .response(headers: [("Cache-Control", "max-age=600")], body: "v\(version.withLock { $0 })")
        }
        let before = try await fixture.client.getPet(id: 7)
        let update = try await fixture.client.updatePet(id: 7, name: "rex")
        let after = try await fixture.client.getPet(id: 7)
        try await fixture.origin.stop()

        #expect(before.body == "v1")
        #expect(update.body == "updated to rex")
        #expect(after.body == "v2")
        #expect(fixture.origin.received.map(\.method) == ["GET", "PUT", "GET"])
    }
}

/// A hand-written OpenAPI client of two operations: it runs its middlewares, then its transport,
/// as a generated `Client` does.
struct PetsClient: Sendable {
    let serverURL: URL
    let middlewares: [any ClientMiddleware]
    let transport: any ClientTransport

    /// `GET /pets/{id}`.
    func getPet(id: Int) async throws -> (response: HTTPResponse, body: String) {
        try await call(HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/pets/\(id)"), body: nil, operationID: "getPet")
    }

    /// `PUT /pets/{id}` with the new name as the body.
    func updatePet(id: Int, name: String) async throws -> (response: HTTPResponse, body: String) {
        try await call(HTTPRequest(method: .put, scheme: nil, authority: nil, path: "/pets/\(id)"), body: HTTPBody(name), operationID: "updatePet")
    }

    private func call(_ request: HTTPRequest, body: HTTPBody?, operationID: String) async throws -> (response: HTTPResponse, body: String) {
        let transport = transport
        var next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?) = {
            try await transport.send($0, body: $1, baseURL: $2, operationID: operationID)
        }
        for middleware in middlewares.reversed() {
            let inner = next
            next = { try await middleware.intercept($0, body: $1, baseURL: $2, operationID: operationID, next: inner) }
        }
        let (response, responseBody) = try await next(request, body, serverURL)
        guard let responseBody else { return (response, "") }
        return (response, try await String(collecting: responseBody, upTo: 1 << 20))
    }
}

/// A `ClientTransport` on URLSession (through HTTPTypesFoundation), with no URLCache.
struct TestTransport: ClientTransport {
    let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        return URLSession(configuration: configuration)
    }()

    func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        var absolute = request
        absolute.scheme = baseURL.scheme
        absolute.authority = baseURL.host.map { host in baseURL.port.map { "\(host):\($0)" } ?? host }
        absolute.path = baseURL.path + (request.path ?? "")
        let (data, response) = if let body {
            try await session.upload(for: absolute, from: Data(collecting: body, upTo: 1 << 20))
        } else {
            try await session.data(for: absolute)
        }
        return (response, data.isEmpty ? nil : HTTPBody(data))
    }
}
#endif  // AsyncHTTPClient && OpenAPI
