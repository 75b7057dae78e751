#if AsyncHTTPClient
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Foundation
import NIOHTTP1
import StashHTTP
import StashURLSession
import Testing

/// `StashURLProtocol` in a plain `URLSession`, against a real origin on 127.0.0.1. Serialized: the
/// protocol's cache is a static, and each test sets its own.
@Suite(.serialized, .timeLimit(.minutes(5))) struct StashURLProtocolTests {
    static func session() -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [StashURLProtocol.self] + (configuration.protocolClasses ?? [])
        configuration.urlCache = nil
        return URLSession(configuration: configuration)
    }

    @Test func aSessionWithTheProtocolFirstAnswersFromTheCache() async throws {
        StashURLProtocol.cache = try HTTPCache()
        let origin = try await TestOrigin { request in
            .response(headers: [("Cache-Control", "max-age=60")], body: "body of \(request.uri)")
        }
        let session = Self.session()
        let (first, firstResponse) = try await session.data(from: URL(string: origin.url + "/p?x=1")!)
        let (second, secondResponse) = try await session.data(from: URL(string: origin.url + "/p?x=1")!)
        session.invalidateAndCancel()
        try await origin.stop()

        #expect(String(decoding: first, as: UTF8.self) == "body of /p?x=1")
        #expect(String(decoding: second, as: UTF8.self) == "body of /p?x=1")
        #expect((firstResponse as? HTTPURLResponse)?.value(forHTTPHeaderField: "Cache-Status") == "Stash; fwd=uri-miss")
        #expect((secondResponse as? HTTPURLResponse)?.value(forHTTPHeaderField: "Cache-Status") == "Stash; hit")
        #expect(origin.received.count == 1)
    }

    /// A body of several chunks on the wire reaches the caller whole (FoundationNetworking would
    /// hand a completion handler only the last of several `didLoad` calls), and a redirect is
    /// followed inside the protocol (reporting it would stop the process on Linux).
    @Test func aRedirectedLargeBodyArrivesWhole() async throws {
        StashURLProtocol.cache = try HTTPCache()
        let large = String(repeating: "0123456789abcdef", count: 1 << 16)  // 1 MiB
        let origin = try await TestOrigin { request in
            request.uri == "/moved"
                ? .response(status: .movedPermanently, headers: [("Location", "/large")])
                : .response(headers: [("Cache-Control", "max-age=60")], body: large)
        }
        let session = Self.session()
        let (data, response) = try await session.data(from: URL(string: origin.url + "/moved")!)
        session.invalidateAndCancel()
        try await origin.stop()

        #expect(data.count == large.utf8.count)
        #expect(String(decoding: data, as: UTF8.self) == large)
        #expect(response.url?.path == "/large")
        #expect(origin.received.map(\.uri) == ["/moved", "/large"])
    }

    /// The request's `cachePolicy` is honoured through the protocol too.
    @Test func theRequestsCachePolicyIsHonoured() async throws {
        StashURLProtocol.cache = try HTTPCache()
        let origin = try await TestOrigin { _ in .response(headers: [("Cache-Control", "max-age=60")], body: "x") }
        let session = Self.session()
        var request = URLRequest(url: URL(string: origin.url + "/policy")!)
        _ = try await session.data(for: request)
        request.cachePolicy = .reloadIgnoringLocalCacheData
        let (_, reloaded) = try await session.data(for: request)
        session.invalidateAndCancel()
        try await origin.stop()

        #expect((reloaded as? HTTPURLResponse)?.value(forHTTPHeaderField: "Cache-Status") == "Stash; fwd=uri-miss")
        #expect(origin.received.count == 2)
    }
}
#endif  // AsyncHTTPClient
