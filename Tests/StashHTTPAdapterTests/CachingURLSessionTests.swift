#if AsyncHTTPClient
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Foundation
import NIOHTTP1
import Stash
import StashHTTP
@testable import StashProxy
import StashTestSupport
import StashURLSession
import Testing

/// `CachingURLSession` against a real origin on 127.0.0.1 (the adapter tests' `TestOrigin`):
/// freshness, revalidation, keys, `Vary`, invalidation, `no-store`, every `URLRequest.CachePolicy`,
/// stale-if-error, cut bodies, large bodies and redirects. The cache runs on a manual clock: no
/// test waits for time.
@Suite(.timeLimit(.minutes(5))) struct CachingURLSessionTests {
    struct Fixture {
        let origin: TestOrigin
        let clock = ManualClock(start: 1_800_000_000_000_000_000)
        let session: CachingURLSession

        init(
            configure: (inout HTTPCache.Configuration) -> Void = { _ in },
            delegate: (any URLSessionDelegate)? = nil,
            followsRedirects: Bool = true,
            respond: @escaping @Sendable (TestOrigin.Received) -> TestOrigin.Reply
        ) async throws {
            origin = try await TestOrigin(respond: respond)
            var configuration = HTTPCache.Configuration(mode: .private)
            configuration.clock = clock
            configure(&configuration)
            session = CachingURLSession(
                configuration: .ephemeral, cache: try HTTPCache(configuration: configuration),
                delegate: delegate, followsRedirects: followsRedirects)
        }

        func request(_ path: String, method: String = "GET", headers: [String: String] = [:], policy: URLRequest.CachePolicy = .useProtocolCachePolicy) -> URLRequest {
            var request = URLRequest(url: URL(string: origin.url + path)!)
            request.httpMethod = method
            for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
            request.cachePolicy = policy
            request.timeoutInterval = 10
            return request
        }

        /// One request through the cache: the body as text, the response and the outcome.
        func get(_ path: String, headers: [String: String] = [:], policy: URLRequest.CachePolicy = .useProtocolCachePolicy) async throws -> (String, HTTPURLResponse, HTTPCacheOutcome) {
            let (data, response, outcome) = try await session.dataWithOutcome(for: request(path, headers: headers, policy: policy))
            return (String(decoding: data, as: UTF8.self), try #require(response as? HTTPURLResponse), outcome)
        }

        func stop() async throws {
            session.invalidateAndCancel()
            try await origin.stop()
        }
    }

    @Test func aFreshResponseIsAHitWithAgeAndCacheStatusAndTheQueryIsPartOfTheKey() async throws {
        let fixture = try await Fixture { request in .response(headers: [("Cache-Control", "max-age=60")], body: "body of \(request.uri)") }
        let (data, first) = try await fixture.session.data(from: URL(string: fixture.origin.url + "/a?q=1")!)
        fixture.clock.advance(by: .seconds(5))
        let (body, second, outcome) = try await fixture.get("/a?q=1")
        let (other, _, otherOutcome) = try await fixture.get("/a?q=2")
        try await fixture.stop()

        #expect(String(decoding: data, as: UTF8.self) == "body of /a?q=1")
        #expect((first as? HTTPURLResponse)?.value(forHTTPHeaderField: "Cache-Status") == "Stash; fwd=uri-miss")
        #expect(body == "body of /a?q=1")
        #expect(outcome == .hit)
        #expect(second.value(forHTTPHeaderField: "Cache-Status") == "Stash; hit")
        #expect(second.value(forHTTPHeaderField: "Age") == "5")
        #expect(second.url?.absoluteString == fixture.origin.url + "/a?q=1")
        #expect(otherOutcome == .miss)
        #expect(other == "body of /a?q=2")
        #expect(fixture.origin.received.map(\.uri) == ["/a?q=1", "/a?q=2"])
    }

    /// The underlying session keeps no `URLCache` of its own, so that two caches never disagree.
    @Test func theUnderlyingSessionHasNoURLCache() throws {
        let session = CachingURLSession(cache: try HTTPCache())
        #expect(session.session.configuration.urlCache == nil)
        session.invalidateAndCancel()
    }

    @Test(arguments: [
        ("ETag", "\"v1\"", "If-None-Match"),
        ("Last-Modified", "Fri, 15 Jan 2027 07:00:00 GMT", "If-Modified-Since"),
    ])
    func aStaleResponseIsRevalidatedWithA304(validator: String, value: String, conditional: String) async throws {
        let fixture = try await Fixture { request in
            request.headers[conditional] == [value]
                ? .response(status: .notModified, headers: [(validator, value), ("Cache-Control", "max-age=10"), ("X-New", "yes")])
                : .response(headers: [(validator, value), ("Cache-Control", "max-age=10")], body: "stored body")
        }
        _ = try await fixture.get("/r")
        fixture.clock.advance(by: .seconds(11))
        let (body, revalidated, outcome) = try await fixture.get("/r")
        let (_, _, afterwards) = try await fixture.get("/r")
        try await fixture.stop()

        #expect(outcome == .revalidated)
        #expect(revalidated.statusCode == 200)
        #expect(body == "stored body")
        #expect(revalidated.value(forHTTPHeaderField: "X-New") == "yes")
        #expect(afterwards == .hit)
        #expect(fixture.origin.received.count == 2)
        #expect(fixture.origin.received.last?.headers[conditional] == [value])
    }

    @Test func varyKeepsOneVariantPerRequestHeaderValue() async throws {
        let fixture = try await Fixture { request in
            .response(headers: [("Cache-Control", "max-age=60"), ("Vary", "Accept-Language")], body: request.headers["Accept-Language"].first ?? "none")
        }
        var results: [(String, HTTPCacheOutcome)] = []
        for language in ["en", "fr", "en", "fr"] {
            let (body, _, outcome) = try await fixture.get("/v", headers: ["Accept-Language": language])
            results.append((body, outcome))
        }
        try await fixture.stop()

        #expect(results.map(\.0) == ["en", "fr", "en", "fr"])
        #expect(results.map(\.1) == [.miss, .miss, .hit, .hit])
        #expect(fixture.origin.received.count == 2)
    }

    @Test func anUploadInvalidatesTheStoredResponse() async throws {
        let fixture = try await Fixture { request in
            .response(headers: [("Cache-Control", "max-age=60")], body: "\(request.method) \(request.body)")
        }
        _ = try await fixture.get("/item")
        let (posted, _) = try await fixture.session.upload(for: fixture.request("/item", method: "POST"), from: Data("new".utf8))
        let (after, _, outcome) = try await fixture.get("/item")
        try await fixture.stop()

        #expect(String(decoding: posted, as: UTF8.self) == "POST new")
        #expect(outcome == .miss)
        #expect(after == "GET ")
        #expect(fixture.origin.received.map(\.method) == ["GET", "POST", "GET"])
    }

    @Test func aNoStoreResponseIsNotStored() async throws {
        let fixture = try await Fixture { _ in .response(headers: [("Cache-Control", "no-store, max-age=60")], body: "secret") }
        let (_, _, first) = try await fixture.get("/ns")
        let (body, _, second) = try await fixture.get("/ns")
        try await fixture.stop()

        #expect([first, second] == [.miss, .miss])
        #expect(body == "secret")
        #expect(fixture.origin.received.count == 2)
    }

    /// Each `URLRequest.CachePolicy` against a stored response that is stale (with a validator).
    @Test(arguments: [
        (URLRequest.CachePolicy.useProtocolCachePolicy, HTTPCacheOutcome.revalidated, "If-None-Match" as String?),
        (.reloadIgnoringLocalCacheData, .miss, nil),
        (.reloadRevalidatingCacheData, .revalidated, "If-None-Match"),
        (.returnCacheDataElseLoad, .stale, nil),
        (.returnCacheDataDontLoad, .stale, nil),
    ])
    func eachCachePolicyIsHonoured(policy: URLRequest.CachePolicy, expected: HTTPCacheOutcome, conditional: String?) async throws {
        let fixture = try await Fixture { request in
            request.headers["If-None-Match"] == ["\"v1\""]
                ? .response(status: .notModified, headers: [("ETag", "\"v1\""), ("Cache-Control", "max-age=10")])
                : .response(headers: [("ETag", "\"v1\""), ("Cache-Control", "max-age=10")], body: "stored")
        }
        _ = try await fixture.get("/p")
        fixture.clock.advance(by: .seconds(60))
        let (body, response, outcome) = try await fixture.get("/p", policy: policy)
        try await fixture.stop()

        #expect(outcome == expected)
        #expect(response.statusCode == 200)
        #expect(body == "stored")
        let asked = fixture.origin.received.dropFirst()
        #expect(asked.count == (expected == .stale ? 0 : 1))
        if let conditional { #expect(asked.first?.headers[conditional] == ["\"v1\""]) }
        if policy == .reloadIgnoringLocalCacheData { #expect(asked.first?.headers["If-None-Match"] == []) }
    }

    /// `.reloadRevalidatingCacheData` asks the origin even when the stored response is fresh;
    /// `.returnCacheDataDontLoad` never asks it: a miss is a `504`.
    @Test func revalidatingAFreshResponseAndAMissThatMayNotLoad() async throws {
        let fixture = try await Fixture { _ in .response(headers: [("ETag", "\"v1\""), ("Cache-Control", "max-age=600")], body: "fresh") }
        _ = try await fixture.get("/f")
        let (_, _, revalidated) = try await fixture.get("/f", policy: .reloadRevalidatingCacheData)
        let (_, missing, missOutcome) = try await fixture.get("/absent", policy: .returnCacheDataDontLoad)
        try await fixture.stop()

        #expect(fixture.origin.received.count == 2)
        #expect(fixture.origin.received.last?.headers["If-None-Match"] == ["\"v1\""])
        #expect(revalidated == .miss)  // the origin answered 200 again, not 304
        #expect(missing.statusCode == 504)
        #expect(missOutcome == .miss)
    }

    @Test func anUnreachableOriginThrowsAURLErrorUnlessStaleIfErrorAllows() async throws {
        let fixture = try await Fixture { request in
            .response(headers: [("Cache-Control", request.uri == "/sie" ? "max-age=1, stale-if-error=600" : "max-age=1")], body: "old")
        }
        _ = try await fixture.get("/sie")
        _ = try await fixture.get("/plain")
        try await fixture.origin.stop()
        fixture.clock.advance(by: .seconds(10))

        let (body, _, outcome) = try await fixture.get("/sie")
        await #expect(throws: URLError.self) {
            _ = try await fixture.get("/plain")
        }
        fixture.session.invalidateAndCancel()

        #expect(outcome == .stale)
        #expect(body == "old")
    }

    @Test func aBodyCutMidwayStoresNothing() async throws {
        let fixture = try await Fixture { request in
            request.headers["X-Attempt"] == ["1"]
                ? .closeMidBody(announced: 100, sent: "partial")
                : .response(headers: [("Cache-Control", "max-age=60")], body: "whole")
        }
        await #expect(throws: (any Error).self) {
            _ = try await fixture.get("/cut", headers: ["X-Attempt": "1"])
        }
        let (body, _, outcome) = try await fixture.get("/cut", headers: ["X-Attempt": "2"])
        try await fixture.stop()

        #expect(outcome == .miss)
        #expect(body == "whole")
    }

    @Test func aFiveMegabyteBodyArrivesByteIdenticalFromTheOriginAndTheStore() async throws {
        var generator = SeededGenerator(seed: 30)
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        let large = String((0..<(5 << 20)).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
        let fixture = try await Fixture(configure: { $0.maximumEntrySize = 8 << 20; $0.memoryCostLimit = 32 << 20 }) { _ in
            .response(headers: [("Cache-Control", "max-age=60")], body: large)
        }
        let (fromOrigin, _, first) = try await fixture.get("/large")
        let (fromStore, _, second) = try await fixture.get("/large")
        try await fixture.stop()

        #expect(first == .miss)
        #expect(second == .hit)
        #expect(fromOrigin == large)
        #expect(fromStore == large)
    }

    @Test func downloadWritesTheBodyToANewFile() async throws {
        let fixture = try await Fixture { _ in .response(headers: [("Cache-Control", "max-age=60")], body: "file body") }
        let (file, response) = try await fixture.session.download(for: fixture.request("/d"))
        let (again, _) = try await fixture.session.download(from: URL(string: fixture.origin.url + "/d")!)
        try await fixture.stop()
        defer { try? FileManager.default.removeItem(at: file); try? FileManager.default.removeItem(at: again) }

        #expect(try String(contentsOf: file, encoding: .utf8) == "file body")
        #expect(try String(contentsOf: again, encoding: .utf8) == "file body")
        #expect(file != again)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(fixture.origin.received.count == 1)
    }

    @Test func bytesGivesTheBodyByteByByteFromTheOriginAndTheStore() async throws {
        let fixture = try await Fixture { _ in .response(headers: [("Cache-Control", "max-age=60")], body: "line 1\nline 2\n") }
        var received: [[UInt8]] = []
        var outcomes: [String?] = []
        for _ in 0..<2 {
            let (bytes, response) = try await fixture.session.bytes(from: URL(string: fixture.origin.url + "/b")!)
            var collected: [UInt8] = []
            for try await byte in bytes { collected.append(byte) }
            received.append(collected)
            outcomes.append((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Cache-Status"))
        }
        try await fixture.stop()

        #expect(received == [Array("line 1\nline 2\n".utf8), Array("line 1\nline 2\n".utf8)])
        #expect(outcomes == ["Stash; fwd=uri-miss", "Stash; hit"])
        #expect(fixture.origin.received.count == 1)
    }

    /// A `Range` request is answered from the stored complete response (RFC 9110 §14).
    @Test func aRangeOfAStoredResponseIsServedFromTheStore() async throws {
        let fixture = try await Fixture { _ in .response(headers: [("Cache-Control", "max-age=60")], body: "0123456789") }
        _ = try await fixture.get("/r")
        let (part, response, outcome) = try await fixture.get("/r", headers: ["Range": "bytes=2-4"])
        try await fixture.stop()

        #expect(part == "234")
        #expect(response.statusCode == 206)
        #expect(response.value(forHTTPHeaderField: "Content-Range") == "bytes 2-4/10")
        #expect(outcome == .hit)
        #expect(fixture.origin.received.count == 1)
    }

    /// A stored `301` is served from the store and followed; each URL's answer is stored under it.
    @Test func aPermanentRedirectIsStoredAndFollowedThroughTheCache() async throws {
        let fixture = try await Fixture { request in
            request.uri == "/old"
                ? .response(status: .movedPermanently, headers: [("Location", "/new"), ("Cache-Control", "max-age=3600")])
                : .response(headers: [("Cache-Control", "max-age=60")], body: "new place")
        }
        let (body, response, outcome) = try await fixture.get("/old")
        let (again, _, againOutcome) = try await fixture.get("/old")
        try await fixture.stop()

        #expect(body == "new place")
        #expect(response.url?.path == "/new")
        #expect(outcome == .miss)
        #expect(again == "new place")
        #expect(againOutcome == .hit)
        #expect(fixture.origin.received.map(\.uri) == ["/old", "/new"])
    }

    /// `303` turns a `POST` into a `GET` without a body, as URLSession does.
    @Test func aSeeOtherAfterAPostIsFollowedWithAGet() async throws {
        let fixture = try await Fixture { request in
            request.method == "POST"
                ? .response(status: .seeOther, headers: [("Location", "/result")])
                : .response(body: "\(request.method) \(request.uri) \(request.body)")
        }
        let (data, response) = try await fixture.session.upload(for: fixture.request("/form", method: "POST"), from: Data("a=1".utf8))
        try await fixture.stop()

        #expect(String(decoding: data, as: UTF8.self) == "GET /result ")
        #expect((response as? HTTPURLResponse)?.url?.path == "/result")
    }

    /// A delegate that refuses a redirect receives the `3xx`, as with URLSession; so does a session
    /// made with `followsRedirects: false`.
    @Test func aDelegateOrTheSessionCanStopRedirects() async throws {
        let respond: @Sendable (TestOrigin.Received) -> TestOrigin.Reply = { request in
            request.uri == "/from" ? .response(status: .found, headers: [("Location", "/to")]) : .response(body: "to")
        }
        let refusing = try await Fixture(delegate: NotFollowingRedirects(), respond: respond)
        let (_, refused, _) = try await refusing.get("/from")
        try await refusing.stop()
        let notFollowing = try await Fixture(followsRedirects: false, respond: respond)
        let (_, notFollowed, _) = try await notFollowing.get("/from")
        try await notFollowing.stop()

        #expect(refused.statusCode == 302)
        #expect(refused.value(forHTTPHeaderField: "Location") == "/to")
        #expect(refusing.origin.received.map(\.uri) == ["/from"])
        #expect(notFollowed.statusCode == 302)
        #expect(notFollowing.origin.received.map(\.uri) == ["/from"])
    }

    /// The underlying session's cookie storage sends the cookie an origin set.
    @Test func cookiesSetByTheOriginAreSentAgain() async throws {
        let origin = try await TestOrigin { request in
            request.uri == "/login"
                ? .response(headers: [("Set-Cookie", "session=abc; Path=/")], body: "in")
                : .response(body: request.headers["Cookie"].first ?? "no cookie")
        }
        // The ephemeral configuration's cookie storage is the session's own, in memory.
        let session = CachingURLSession(configuration: .ephemeral, cache: try HTTPCache())
        _ = try await session.data(from: URL(string: origin.url + "/login")!)
        let (data, _) = try await session.data(from: URL(string: origin.url + "/me")!)
        session.invalidateAndCancel()
        try await origin.stop()

        #expect(String(decoding: data, as: UTF8.self) == "session=abc")
    }

    /// An authentication challenge goes to the delegate passed to the call, whose credential
    /// URLSession then sends; the answer is stored as any other (a private cache).
    @Test func anAuthenticationChallengeGoesToTheCallersDelegate() async throws {
        let fixture = try await Fixture { request in
            request.headers["Authorization"] == ["Basic dXNlcjpzZWNyZXQ="]  // user:secret
                ? .response(headers: [("Cache-Control", "private, max-age=60")], body: "welcome")
                : .response(status: .unauthorized, headers: [("WWW-Authenticate", "Basic realm=\"stash\"")], body: "who?")
        }
        let delegate = SupplyingCredentials()
        let (data, response) = try await fixture.session.data(for: fixture.request("/private"), delegate: delegate)
        let (_, _, again) = try await fixture.get("/private")
        try await fixture.stop()

        #expect(String(decoding: data, as: UTF8.self) == "welcome")
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(delegate.challenges.withLock { $0 } == 1)
        #expect(again == .hit)
    }

    @Test func aURLThatIsNotHTTPIsAnUnsupportedURLError() async throws {
        let session = CachingURLSession(cache: try HTTPCache())
        await #expect {
            _ = try await session.data(from: URL(string: "ftp://127.0.0.1/file")!)
        } throws: { error in
            (error as? URLError)?.code == .unsupportedURL
        }
        session.invalidateAndCancel()
    }
}

/// A task delegate that answers a Basic challenge with `user:secret`, and counts the challenges.
final class SupplyingCredentials: NSObject, URLSessionTaskDelegate, Sendable {
    let challenges = LockedValue(0)

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        challenges.withLock { $0 += 1 }
        completionHandler(.useCredential, URLCredential(user: "user", password: "secret", persistence: .forSession))
    }
}

#endif  // AsyncHTTPClient
