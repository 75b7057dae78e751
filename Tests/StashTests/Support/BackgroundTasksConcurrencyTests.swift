import StashTestSupport
import Testing
@testable import Stash

/// `BackgroundTasks` and `finishes(within:on:)`, what `close()` waits with: counting, waking,
/// cancellation and deadlines across tasks (run under the thread sanitizer in CI).
@Suite(.timeLimit(.minutes(5))) struct BackgroundTasksConcurrencyTests {
    @Test func waitingForBackgroundTasksReturnsWhenTheLastOneEnds() async throws {
        let tasks = BackgroundTasks()
        let gate = TestGate()
        let finished = Counter()
        for _ in 0..<3 {
            tasks.start {
                await gate.waitIgnoringTimeout()
                finished.increment()
            }
        }
        #expect(tasks.count == 3)
        async let idle: Void = tasks.waitUntilIdle()
        try await yield(until: { gate.waitingCount == 3 }, onTimeout: gate.open)
        gate.open()
        await idle
        #expect(finished.count == 3)
        #expect(tasks.count == 0)
        await tasks.waitUntilIdle()  // nothing running: returns at once
    }

    @Test func waitingIsBoundedByTheClock() async throws {
        let tasks = BackgroundTasks()
        let gate = TestGate()
        tasks.start { await gate.waitIgnoringTimeout() }
        let clock = ManualClock(start: 0)
        async let finishedInTime = tasks.waitUntilIdle(timeout: .seconds(5), clock: clock)
        try await yield(until: { clock.sleeperCount == 1 }, onTimeout: { clock.advance(by: .seconds(5)) })
        clock.advance(by: .seconds(5))
        #expect(await finishedInTime == false)
        #expect(tasks.count == 1)
        gate.open()
        #expect(await tasks.waitUntilIdle(timeout: .seconds(5), clock: clock))
    }

    @Test func aCancelledWaitReturns() async {
        let tasks = BackgroundTasks()
        let gate = TestGate()
        tasks.start { await gate.waitIgnoringTimeout() }
        let waiter = Task { await tasks.waitUntilIdle() }
        waiter.cancel()
        await waiter.value  // returns although a task still runs
        #expect(tasks.count == 1)
        gate.open()
        await tasks.waitUntilIdle()
    }

    /// The deadline bounds work that ignores cancellation (a gate nobody opens), and leaves it.
    @Test func aDeadlineBoundsWorkThatNeverEnds() async throws {
        let clock = ManualClock(start: 0)
        let gate = TestGate()
        async let finished = finishes(within: .seconds(3), on: clock) { await gate.waitIgnoringTimeout() }
        try await yield(until: { clock.sleeperCount == 1 }, onTimeout: { clock.advance(by: .seconds(3)) })
        clock.advance(by: .seconds(3))
        #expect(await finished == false)
        #expect(await finishes(within: .seconds(3), on: clock) {} == true)
        #expect(clock.sleeperCount == 0, "the timer of a race the work won is cancelled")
        gate.open()
    }

    @Test func aCallerAlreadyCancelledGetsFalseAtOnce() async {
        let clock = ManualClock(start: 0)
        let gate = TestGate()
        let caller = Task { await finishes(within: .seconds(3), on: clock) { await gate.waitIgnoringTimeout() } }
        caller.cancel()
        #expect(await caller.value == false)
        gate.open()
    }
}
