import Testing
@testable import Stash

@Suite(.timeLimit(.minutes(5))) struct ClockTests {
    @Test func manualClockAdvances() {
        let clock = ManualClock(start: 5)
        #expect(clock.nanosecondsNow == 5)
        clock.advance(by: .milliseconds(3))
        #expect(clock.nanosecondsNow == 3_000_005)
    }

    @Test func manualClockWakesSleepersWhenItReachesTheirDeadline() async throws {
        let clock = ManualClock()
        let early = Task { try await clock.sleep(until: 10) }
        let late = Task { try await clock.sleep(until: 20) }
        try await yield { clock.sleeperCount == 2 }
        clock.advance(by: .nanoseconds(15))
        try await early.value
        #expect(clock.sleeperCount == 1)
        late.cancel()
        await #expect(throws: CancellationError.self) { try await late.value }
        #expect(clock.sleeperCount == 0)
        // A deadline already passed returns at once.
        try await clock.sleep(until: 5)
    }

    @Test func systemClockNeverGoesBackwards() {
        let clock = SystemClock()
        var previous = clock.nanosecondsNow
        for _ in 0..<1000 {
            let now = clock.nanosecondsNow
            #expect(now >= previous)
            previous = now
        }
    }

    @Test func durationConversionClamps() {
        #expect(Duration.seconds(2).nanosecondsClamped == 2_000_000_000)
        #expect(Duration.seconds(Int64.max).nanosecondsClamped == .max)
        #expect(Int64.max.addingClamped(1) == .max)
        #expect(Int64.min.addingClamped(-1) == .min)
    }
}
