#if AsyncHTTPClient
import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import StashAsyncHTTPClient
import Testing
@testable import StashProxy

/// stash-proxy as a plain forwarder (`--no-cache`): what crosses it unchanged, and what it answers itself.
@Suite(.timeLimit(.minutes(5))) struct ProxyForwardingTests {
    func forwarding(_ origin: TestOrigin, timeout: TimeAmount = requestBound) async throws -> (ProxyHarness, HTTPClient) {
        let responder = ForwardingResponder(fetcher: OriginFetcher(client: ProxyHarness.originClient, timeout: timeout))
        return (try await ProxyHarness(origin: origin, responder: responder), HTTPClient.shared)
    }

    @Test func forwardsMethodTargetBodyAndEndToEndHeadersBothWays() async throws {
        let origin = try await TestOrigin { _ in
            .response(
                status: HTTPResponseStatus(statusCode: 299, reasonPhrase: "Odd Reason"),
                headers: [("X-Twice", "one"), ("Date", "Mon, 01 Jan 2001 00:00:00 GMT"), ("X-Twice", "two"),
                          ("Connection", "X-Hop"), ("X-Hop", "dropped"), ("Keep-Alive", "timeout=5")],
                body: "answer"
            )
        }
        let (proxy, _) = try await forwarding(origin)
        let (response, body) = try await proxy.send(
            .PUT, "/config/abc?x=1&y=%20",
            headers: [("X-End", "kept"), ("Connection", "X-Hop-Request"), ("X-Hop-Request", "dropped"), ("Pragma", "foo")],
            body: "payload"
        )
        try await proxy.stop()
        try await origin.stop()

        let seen = try #require(origin.received.first)
        #expect(seen.method == "PUT")
        #expect(seen.uri == "/config/abc?x=1&y=%20")
        #expect(seen.body == "payload")
        #expect(seen.headers["X-End"] == ["kept"])
        #expect(seen.headers["Pragma"] == ["foo"])
        #expect(seen.headers["X-Hop-Request"].isEmpty)
        #expect(response.status.code == 299)
        // The reason phrase is not kept: NIO's parser drops it (a custom code arrives with none).
        #expect(response.headers["X-Twice"] == ["one", "two"])
        #expect(response.headers["Date"] == ["Mon, 01 Jan 2001 00:00:00 GMT"])
        #expect(response.headers["X-Hop"].isEmpty)
        #expect(response.headers["Keep-Alive"].isEmpty)
        #expect(response.headers["Server"].isEmpty)
        #expect(body == "answer")
    }

    @Test func forwardsMSearchWithItsHyphen() async throws {
        let origin = try await TestOrigin { _ in .response(body: "ok") }
        let (proxy, _) = try await forwarding(origin)
        let (response, _) = try await proxy.send(.RAW(value: "M-SEARCH"), "/x")
        try await proxy.stop()
        try await origin.stop()
        // NIO's parser reads M-SEARCH as .MSEARCH; a hyphenless MSEARCH would not parse at all.
        #expect(response.status == .ok)
        #expect(origin.received.map(\.method) == ["MSEARCH"])
    }

    @Test func answers502WhenTheOriginIsDown() async throws {
        let origin = try await TestOrigin { _ in .response() }
        try await origin.stop()
        let (proxy, _) = try await forwarding(origin)
        let (response, body) = try await proxy.send(.GET, "/")
        try await proxy.stop()
        #expect(response.status == .badGateway)
        #expect(body.contains("origin"))
    }

    @Test func answers502WhenTheOriginClosesWithoutAnswering() async throws {
        let origin = try await TestOrigin { _ in .close }
        let (proxy, _) = try await forwarding(origin)
        let (response, _) = try await proxy.send(.GET, "/")
        try await proxy.stop()
        try await origin.stop()
        #expect(response.status == .badGateway)
    }

    @Test func answers504WhenTheOriginTimesOut() async throws {
        let origin = try await TestOrigin { _ in .hang }
        let (proxy, _) = try await forwarding(origin, timeout: .milliseconds(200))
        let (response, _) = try await proxy.send(.GET, "/")
        try await proxy.stop()
        try await origin.stop()
        #expect(response.status == .gatewayTimeout)
    }

    @Test func cutsTheClientConnectionWhenTheOriginClosesMidBody() async throws {
        let origin = try await TestOrigin { _ in .closeMidBody(announced: 100, sent: "only part") }
        let (proxy, _) = try await forwarding(origin)
        await #expect(throws: (any Error).self) {
            _ = try await proxy.send(.GET, "/")
        }
        try await proxy.stop()
        try await origin.stop()
    }
}
#endif  // AsyncHTTPClient
