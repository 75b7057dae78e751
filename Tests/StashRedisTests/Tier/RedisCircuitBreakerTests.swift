#if Redis
import Stash
import XCTest
@testable import StashRedis

final class RedisCircuitBreakerTests: XCTestCase {
    private let outage = RedisError(.connectionFailed, "refused")

    func testOpensAfterTheThresholdThenProbesOnceAfterTheCoolDown() {
        let clock = ManualClock()
        let logs = LogRecorder(), logger = logs.logger
        let breaker = RedisCircuitBreaker(failureThreshold: 3, openDuration: .seconds(1), clock: clock, logger: logger)
        for _ in 0..<2 {
            XCTAssertTrue(breaker.allowsCall())
            breaker.recordFailure(outage)
        }
        XCTAssertEqual(breaker.phase, .closed)
        XCTAssertTrue(breaker.allowsCall())
        breaker.recordFailure(outage)
        XCTAssertEqual(breaker.phase, .open)
        XCTAssertFalse(breaker.allowsCall())
        clock.advance(by: .milliseconds(124))
        XCTAssertFalse(breaker.allowsCall())
        clock.advance(by: .milliseconds(1))
        XCTAssertTrue(breaker.allowsCall(), "one probe after the first cool-down, an eighth of openDuration")
        XCTAssertEqual(breaker.phase, .halfOpen)
        XCTAssertFalse(breaker.allowsCall(), "only one probe at a time")
        breaker.recordFailure(outage)
        XCTAssertEqual(breaker.phase, .open)
        XCTAssertFalse(breaker.allowsCall())
        clock.advance(by: .milliseconds(249))
        XCTAssertFalse(breaker.allowsCall(), "a failed probe doubles the cool-down")
        clock.advance(by: .milliseconds(1))
        XCTAssertTrue(breaker.allowsCall())
        breaker.recordSuccess()
        XCTAssertEqual(breaker.phase, .closed)
        XCTAssertTrue(breaker.allowsCall())
        XCTAssertEqual(logs.count(atLeast: .error), 1, "one error for the whole outage")
        XCTAssertEqual(logs.count(atLeast: .info), 2, "and one note when it ends")
    }

    /// Probes fail, and the cool-down grows to openDuration and stays there; a new outage starts
    /// again from the shortest. A sign from outside (the subscription restored) probes at once.
    func testTheCoolDownDoublesUpToOpenDurationAndRestartsWithEachOutage() {
        let clock = ManualClock()
        let breaker = RedisCircuitBreaker(failureThreshold: 1, openDuration: .seconds(1), clock: clock,
                                          logger: .init(label: "t"))
        breaker.recordFailure(outage)
        var waits: [Int] = []
        for _ in 0..<6 {
            var waited = 0
            while !breaker.allowsCall() {
                clock.advance(by: .milliseconds(1))
                waited += 1
            }
            waits.append(waited)
            breaker.recordFailure(outage)
        }
        XCTAssertEqual(waits, [125, 250, 500, 1000, 1000, 1000])

        breaker.allowProbeNow()
        XCTAssertTrue(breaker.allowsCall(), "the restored subscription lets a probe through at once")
        XCTAssertFalse(breaker.allowsCall())
        breaker.recordSuccess()
        breaker.recordFailure(outage)
        clock.advance(by: .milliseconds(125))
        XCTAssertTrue(breaker.allowsCall(), "a new outage starts from the first cool-down")
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
