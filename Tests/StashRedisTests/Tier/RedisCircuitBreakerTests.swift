#if Redis
import Stash
import Testing
@testable import StashRedis

extension RedisSuites {
    @Suite(.timeLimit(.minutes(5))) struct RedisCircuitBreakerTests {
        private let outage = RedisError(.connectionFailed, "refused")

        @Test func opensAfterTheThresholdThenProbesOnceAfterTheCoolDown() {
            let clock = ManualClock()
            let logs = LogRecorder(), logger = logs.logger
            let breaker = RedisCircuitBreaker(failureThreshold: 3, openDuration: .seconds(1), clock: clock, logger: logger)
            for _ in 0..<2 {
                #expect(breaker.allowsCall())
                breaker.recordFailure(outage)
            }
            #expect(breaker.phase == .closed)
            #expect(breaker.allowsCall())
            breaker.recordFailure(outage)
            #expect(breaker.phase == .open)
            #expect(!breaker.allowsCall())
            clock.advance(by: .milliseconds(124))
            #expect(!breaker.allowsCall())
            clock.advance(by: .milliseconds(1))
            #expect(breaker.allowsCall(), "one probe after the first cool-down, an eighth of openDuration")
            #expect(breaker.phase == .halfOpen)
            #expect(!breaker.allowsCall(), "only one probe at a time")
            breaker.recordFailure(outage)
            #expect(breaker.phase == .open)
            #expect(!breaker.allowsCall())
            clock.advance(by: .milliseconds(249))
            #expect(!breaker.allowsCall(), "a failed probe doubles the cool-down")
            clock.advance(by: .milliseconds(1))
            #expect(breaker.allowsCall())
            breaker.recordSuccess()
            #expect(breaker.phase == .closed)
            #expect(breaker.allowsCall())
            // At debug level: the Cache the tier serves reports the outage (once).
            #expect(logs.count(atLeast: .info) == 0)
            #expect(logs.messages(at: .debug).filter { $0.contains("circuit breaker opened") }.count == 1, "one note for the whole outage")
            #expect(logs.messages(at: .debug).filter { $0.contains("circuit breaker closed") }.count == 1, "and one when it ends")
        }

        /// Probes fail, and the cool-down grows to openDuration and stays there; a new outage starts
        /// again from the shortest. A sign from outside (the subscription restored) probes at once.
        @Test func theCoolDownDoublesUpToOpenDurationAndRestartsWithEachOutage() {
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
            #expect(waits == [125, 250, 500, 1000, 1000, 1000])

            breaker.allowProbeNow()
            #expect(breaker.allowsCall(), "the restored subscription lets a probe through at once")
            #expect(!breaker.allowsCall())
            breaker.recordSuccess()
            breaker.recordFailure(outage)
            clock.advance(by: .milliseconds(125))
            #expect(breaker.allowsCall(), "a new outage starts from the first cool-down")
        }

        @Test func aSuccessResetsTheCount() {
            let breaker = RedisCircuitBreaker(failureThreshold: 2, openDuration: .seconds(1), clock: ManualClock(), logger: .init(label: "t"))
            breaker.recordFailure(outage)
            breaker.recordSuccess()
            breaker.recordFailure(outage)
            #expect(breaker.phase == .closed)
        }

        @Test func onlyFailuresToReachRedisCount() {
            #expect(RedisCircuitBreaker.isOutage(RedisError(.timeout, "")))
            #expect(RedisCircuitBreaker.isOutage(RedisError(.connectionClosed, "")))
            #expect(!RedisCircuitBreaker.isOutage(RedisError(.serverError, "WRONGTYPE")))
            #expect(!RedisCircuitBreaker.isOutage(RedisError(.valueTooLarge, "")))
        }
    }
}
#endif  // Redis
