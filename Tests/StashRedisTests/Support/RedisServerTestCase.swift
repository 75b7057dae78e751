#if Redis
import XCTest

/// A test case with its own real `redis-server` per test, started before each
/// test (skipped when redis-server is not installed) and stopped after it.
class RedisServerTestCase: XCTestCase {
    /// The test's server.
    var server: RedisServerProcess!

    override func setUpWithError() throws {
        try RedisRequirement.requireServer()
        server = try RedisServerProcess.start()
    }

    override func tearDown() {
        server?.stop()
        server = nil
    }
}
#endif  // Redis
