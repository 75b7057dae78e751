#if Redis
import Foundation
import NIOCore
import NIOSSL
import Testing
@testable import StashRedis

extension RedisSuites {
    @Suite(.requiresRedisServer, .timeLimit(.minutes(5))) final class RedisTLSTests {
        /// The test's own plain-text server, stopped at deinit (whether the test passed, failed or threw).
        private let server: RedisServerProcess

        init() throws {
            try RedisRequirement.requireServer()
            server = try RedisServerProcess.start()
        }

        deinit {
            server.stop()
        }

        @Test func tlsConfigurationBuildsAContextAndABadOneFailsClearly() async throws {
            var configuration = RedisConfiguration(host: "127.0.0.1", port: server.port)
            configuration.tls = .makeClientConfiguration()
            configuration.connectTimeout = .milliseconds(500)
            configuration.commandTimeout = .milliseconds(500)
            #expect(throws: Never.self) { try NIOSSLContext(configuration: configuration.tls!) }
            // A plain-text server never completes a TLS handshake: the call fails, never hangs.
            let client = RedisClient(configuration: configuration)
            do {
                _ = try await client.get("k")
                Issue.record("a TLS client cannot talk to a plain server")
            } catch {
                #expect([.connectionClosed, .timeout, .connectionFailed].contains(error.code), "\(error)")
            }
            await client.close()
        }

        /// A real TLS server (Debian's redis-server is built with TLS): the client
        /// verifies the certificate against its CA and talks through swift-nio-ssl.
        @Test(.requiresOpenSSL) func tlsToARealServer() async throws {
            try RedisRequirement.requireOpenSSL()
            let tlsServer: RedisServerProcess
            do {
                tlsServer = try RedisServerProcess.start(tls: true)
            } catch {
                try RedisRequirement.unavailable("this redis-server has no TLS: \(error)")
            }
            defer { tlsServer.stop() }
            var configuration = RedisConfiguration(host: "127.0.0.1", port: tlsServer.port)
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(tlsServer.certificatePath))
            configuration.tls = tls
            let client = RedisClient(configuration: configuration)
            try await client.set("secure", to: ByteBuffer(string: "yes"))
            let actual1 = try await client.get("secure")
            #expect(actual1 == ByteBuffer(string: "yes"))
            await client.close()

            // Without the CA, the handshake fails with a clear connection error.
            var untrusted = RedisConfiguration(host: "127.0.0.1", port: tlsServer.port)
            untrusted.tls = .makeClientConfiguration()
            let refused = RedisClient(configuration: untrusted)
            do {
                _ = try await refused.get("secure")
                Issue.record("an untrusted certificate must be refused")
            } catch {
                #expect([.connectionClosed, .connectionFailed].contains(error.code), "\(error)")
            }
            await refused.close()
        }
    }
}
#endif  // Redis
