#if Redis
import Stash
import XCTest
@testable import StashRedis

final class RedisCircuitBreakerTests: XCTestCase {
    private let outage = RedisError(.connectionFailed, "refused")

    func testOpensAfterTheThresholdThenProbesOnceAfterTheCoolDown() {
        let clock = ManualClock()
        let logs = LogRecorder(), logger = logs.logger
        let breaker = RedisCircuitBreaker(failureThreshold: 3, openDuration: .seconds(5), clock: clock, logger: logger)
        for _ in 0..<2 {
            XCTAssertTrue(breaker.allowsCall())
            breaker.recordFailure(outage)
        }
        XCTAssertEqual(breaker.phase, .closed)
        XCTAssertTrue(breaker.allowsCall())
        breaker.recordFailure(outage)
        XCTAssertEqual(breaker.phase, .open)
        XCTAssertFalse(breaker.allowsCall())
        clock.advance(by: .seconds(4))
        XCTAssertFalse(breaker.allowsCall())
        clock.advance(by: .seconds(1))
        XCTAssertTrue(breaker.allowsCall(), "one probe after the cool-down")
        XCTAssertEqual(breaker.phase, .halfOpen)
        XCTAssertFalse(breaker.allowsCall(), "only one probe at a time")
        breaker.recordFailure(outage)
        XCTAssertEqual(breaker.phase, .open)
        XCTAssertFalse(breaker.allowsCall())
        clock.advance(by: .seconds(5))
        XCTAssertTrue(breaker.allowsCall())
        breaker.recordSuccess()
        XCTAssertEqual(breaker.phase, .closed)
        XCTAssertTrue(breaker.allowsCall())
        XCTAssertEqual(logs.count(atLeast: .error), 1, "one error for the whole outage")
        XCTAssertEqual(logs.count(atLeast: .info), 2, "and one note when it ends")
    }

    func testASuccessResetsTheCount() {
        let breaker = RedisCircuitBreaker(failureThreshold: 2, openDuration: .seconds(1), clock: ManualClock(), logger: .init(label: "t"))
        breaker.recordFailure(outage)
        breaker.recordSuccess()
        breaker.recordFailure(outage)
        XCTAssertEqual(breaker.phase, .closed)
    }

    func testOnlyFailuresToReachRedisCount() {
        XCTAssertTrue(RedisCircuitBreaker.isOutage(RedisError(.timeout, "")))
        XCTAssertTrue(RedisCircuitBreaker.isOutage(RedisError(.connectionClosed, "")))
        XCTAssertFalse(RedisCircuitBreaker.isOutage(RedisError(.serverError, "WRONGTYPE")))
        XCTAssertFalse(RedisCircuitBreaker.isOutage(RedisError(.valueTooLarge, "")))
    }
}
#endif  // Redis
