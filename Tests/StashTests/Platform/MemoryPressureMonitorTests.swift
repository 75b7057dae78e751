import Dispatch
import Testing
@testable import Stash

@Suite(.timeLimit(.minutes(5))) struct MemoryPressureMonitorTests {
    private typealias Configuration = MemoryPressureMonitor.Configuration

    // MARK: Configuration

    @Test func documentedDefaults() {
        let configuration = Configuration()
        #expect(configuration.psiThreshold == 10)
        #expect(configuration.cgroupUsageThreshold == 0.90)
        #expect(configuration.watchesCgroupEvents)
        #expect(configuration.pollInterval == .seconds(1))
        #expect(configuration.cooldown == .seconds(30))
    }

    @Test func configurationCanBeChangedWhilePolling() {
        let monitor = MemoryPressureMonitor.forTesting(FakeMemoryPressureSource(), startsTimer: true)
        let observer = RecordingObserver()
        monitor.addObserver(observer)
        monitor.configuration.pollInterval = .seconds(7200)
        monitor.configuration.psiThreshold = 50
        #expect(monitor.configuration == Configuration(psiThreshold: 50, pollInterval: .seconds(7200)))
        #expect(monitor.isPolling)
        monitor.removeObserver(observer)
    }

    // MARK: Edge triggering

    @Test func psiCrossingFiresExactlyOncePerCrossing() {
        let source = FakeMemoryPressureSource(.psi(0))
        let monitor = MemoryPressureMonitor.forTesting(source, configuration: Configuration(cooldown: nil))
        let observer = RecordingObserver()
        monitor.addObserver(observer)

        var fired: [Bool] = []
        for psi in [0.0, 9.99, 10, 30, 80, 12, 9, 0, 15, 15] {
            source.reading = .psi(psi)
            fired.append(monitor.poll())
        }
        #expect(fired == [false, false, true, false, false, false, false, false, true, false])
        #expect(observer.pressureCount == 2)
    }

    @Test func cooldownRepeatsWhilePressurePersists() {
        let source = FakeMemoryPressureSource(.psi(50))
        let clock = ManualClock()
        let monitor = MemoryPressureMonitor.forTesting(
            source, configuration: Configuration(cooldown: .seconds(30)), clock: clock)
        let observer = RecordingObserver()
        monitor.addObserver(observer)

        #expect(monitor.poll())  // rise
        clock.advance(by: .seconds(29))
        #expect(!monitor.poll())  // still high, within cooldown
        clock.advance(by: .seconds(1))
        #expect(monitor.poll())  // cooldown elapsed since the last firing
        clock.advance(by: .seconds(10))
        #expect(!monitor.poll())
        #expect(observer.pressureCount == 2)
    }

    @Test func riseAfterPressureEndedFiresEvenWithinCooldown() {
        let source = FakeMemoryPressureSource(.psi(50))
        let clock = ManualClock()
        let monitor = MemoryPressureMonitor.forTesting(
            source, configuration: Configuration(cooldown: .seconds(30)), clock: clock)
        let observer = RecordingObserver()
        monitor.addObserver(observer)

        #expect(monitor.poll())
        clock.advance(by: .seconds(1))
        source.reading = .psi(1)
        #expect(!monitor.poll())  // re-armed
        clock.advance(by: .seconds(1))
        source.reading = .psi(50)
        #expect(monitor.poll())  // a new crossing, 2 s after the last firing
        #expect(observer.pressureCount == 2)
    }

    @Test func noCooldownMeansNoRepeats() {
        let source = FakeMemoryPressureSource(.psi(50))
        let clock = ManualClock()
        let monitor = MemoryPressureMonitor.forTesting(source, configuration: Configuration(cooldown: nil), clock: clock)
        let observer = RecordingObserver()
        monitor.addObserver(observer)
        #expect(monitor.poll())
        clock.advance(by: .seconds(86_400))
        #expect(!monitor.poll())
        #expect(observer.pressureCount == 1)
    }

    @Test func cgroupUsageRatio() {
        let source = FakeMemoryPressureSource(MemoryPressureReading(cgroupUsageBytes: 899, cgroupLimitBytes: 1000))
        let monitor = MemoryPressureMonitor.forTesting(source, configuration: Configuration(cgroupUsageThreshold: 0.9))
        let observer = RecordingObserver()
        monitor.addObserver(observer)

        #expect(!monitor.poll())
        source.reading = MemoryPressureReading(cgroupUsageBytes: 900, cgroupLimitBytes: 1000)
        #expect(monitor.poll())
        source.reading = MemoryPressureReading(cgroupUsageBytes: 999, cgroupLimitBytes: 1000)
        #expect(!monitor.poll())
        source.reading = MemoryPressureReading(cgroupUsageBytes: 500, cgroupLimitBytes: 1000)
        #expect(!monitor.poll())
        // No limit: usage alone is never pressure.
        source.reading = MemoryPressureReading(cgroupUsageBytes: .max)
        #expect(!monitor.poll())
        #expect(observer.pressureCount == 1)
    }

    @Test func cgroupEventIncreaseFires() {
        let source = FakeMemoryPressureSource(MemoryPressureReading(cgroupEventCount: 5))
        let monitor = MemoryPressureMonitor.forTesting(source, configuration: Configuration(cooldown: nil))
        let observer = RecordingObserver()
        monitor.addObserver(observer)

        var fired: [Bool] = []
        // 5: baseline only. 7: increase. 9: still increasing (pressure persists).
        // 9: no increase, re-armed. 10: increase. 2: counter reset, new baseline.
        // nil: unreadable, baseline kept. 3: increase over 2.
        for count: UInt64? in [5, 5, 7, 9, 9, 10, 2, nil, 3] {
            source.reading = MemoryPressureReading(cgroupEventCount: count)
            fired.append(monitor.poll())
        }
        #expect(fired == [false, false, true, false, false, true, false, false, true])
        #expect(observer.pressureCount == 3)
    }

    @Test func disabledSignalsNeverFire() {
        let pressured = MemoryPressureReading(
            psiSomeAvg10: 100, cgroupUsageBytes: 1000, cgroupLimitBytes: 1000, cgroupEventCount: 1)
        let source = FakeMemoryPressureSource(pressured)
        let monitor = MemoryPressureMonitor.forTesting(
            source,
            configuration: Configuration(psiThreshold: nil, cgroupUsageThreshold: nil, watchesCgroupEvents: false))
        let observer = RecordingObserver()
        monitor.addObserver(observer)
        #expect(!monitor.poll())
        source.reading.cgroupEventCount = 50
        #expect(!monitor.poll())
        #expect(observer.pressureCount == 0)
    }

    @Test func anySignalKeepsPressureUp() {
        // PSI rises first; the cgroup crossing while PSI is still high is the same episode.
        let source = FakeMemoryPressureSource(.psi(20))
        let monitor = MemoryPressureMonitor.forTesting(source, configuration: Configuration(cooldown: nil))
        let observer = RecordingObserver()
        monitor.addObserver(observer)
        #expect(monitor.poll())
        source.reading = MemoryPressureReading(psiSomeAvg10: 20, cgroupUsageBytes: 95, cgroupLimitBytes: 100)
        #expect(!monitor.poll())
        source.reading = MemoryPressureReading(psiSomeAvg10: 0, cgroupUsageBytes: 95, cgroupLimitBytes: 100)
        #expect(!monitor.poll())
        source.reading = MemoryPressureReading(psiSomeAvg10: 0, cgroupUsageBytes: 10, cgroupLimitBytes: 100)
        #expect(!monitor.poll())
        source.reading = MemoryPressureReading(psiSomeAvg10: 0, cgroupUsageBytes: 95, cgroupLimitBytes: 100)
        #expect(monitor.poll())
        #expect(observer.pressureCount == 2)
    }

    @Test func historyIsForgottenWhenTheLastObserverLeaves() {
        let source = FakeMemoryPressureSource(.psi(50))
        let monitor = MemoryPressureMonitor.forTesting(source, configuration: Configuration(cooldown: nil))
        let first = RecordingObserver()
        monitor.addObserver(first)
        #expect(monitor.poll())
        monitor.removeObserver(first)

        let second = RecordingObserver()
        monitor.addObserver(second)
        #expect(monitor.poll())  // a fresh start: pressure already high counts as a rise
        #expect(first.pressureCount == 1)
        #expect(second.pressureCount == 1)
    }

    // MARK: Observers

    @Test func notifiesEveryObserverOnce() {
        let source = FakeMemoryPressureSource(.psi(50))
        let monitor = MemoryPressureMonitor.forTesting(source)
        let observers = (0..<3).map { _ in RecordingObserver() }
        for observer in observers {
            monitor.addObserver(observer)
            monitor.addObserver(observer)  // a second registration has no effect
        }
        #expect(monitor.observerCount == 3)
        #expect(monitor.poll())
        #expect(observers.map(\.pressureCount) == [1, 1, 1])
    }

    @Test func observersAreHeldWeaklyAndPrunedWhenDeallocated() {
        let source = FakeMemoryPressureSource(.psi(0))
        let monitor = MemoryPressureMonitor.forTesting(source, configuration: Configuration(cooldown: nil))
        let survivor = RecordingObserver()
        monitor.addObserver(survivor)

        weak var probe: RecordingObserver?
        do {
            let transient = RecordingObserver(onPressure: { _ in Issue.record("a deallocated observer was called") })
            monitor.addObserver(transient)
            probe = transient
            #expect(monitor.observerCount == 2)
        }
        #expect(probe == nil, "the monitor must not keep observers alive")
        #expect(monitor.observerCount == 1)

        source.reading = .psi(50)
        #expect(monitor.poll())
        monitor.notifyMemoryPressure()
        #expect(survivor.pressureCount == 2)
    }

    @Test func removingAnUnknownObserverDoesNothing() {
        let monitor = MemoryPressureMonitor.forTesting(FakeMemoryPressureSource())
        let registered = RecordingObserver()
        monitor.addObserver(registered)
        monitor.removeObserver(RecordingObserver())
        #expect(monitor.observerCount == 1)
    }

    @Test func pollWithoutObserversReadsNothing() {
        let source = FakeMemoryPressureSource(.psi(50))
        let monitor = MemoryPressureMonitor.forTesting(source)
        #expect(!monitor.poll())
        #expect(source.readCount == 0)

        let observer = RecordingObserver()
        monitor.addObserver(observer)
        monitor.poll()
        #expect(source.readCount == 1)
    }

    @Test func notifyMemoryPressureReachesEveryObserverAndKeepsEdgeState() {
        let source = FakeMemoryPressureSource(.psi(0))
        let monitor = MemoryPressureMonitor.forTesting(source, configuration: Configuration(cooldown: nil))
        let a = RecordingObserver()
        let b = RecordingObserver()
        monitor.addObserver(a)
        monitor.addObserver(b)

        monitor.notifyMemoryPressure()
        #expect(a.pressureCount == 1 && b.pressureCount == 1)
        // The app's own signal does not swallow the next real crossing.
        source.reading = .psi(50)
        #expect(monitor.poll())
        #expect(a.pressureCount == 2 && b.pressureCount == 2)
    }

    @Test func didEnterBackgroundIsRelayed() {
        let monitor = MemoryPressureMonitor.forTesting(FakeMemoryPressureSource())
        let observer = RecordingObserver()
        monitor.addObserver(observer)
        monitor.notifyDidEnterBackground()
        #expect(observer.backgroundCount == 1)
        #expect(observer.pressureCount == 0)
    }

    // MARK: The timer

    @Test func timerExistsOnlyWhileObserversExist() {
        let monitor = MemoryPressureMonitor.forTesting(FakeMemoryPressureSource(), startsTimer: true)
        #expect(!monitor.isPolling)

        let a = RecordingObserver()
        let b = RecordingObserver()
        monitor.addObserver(a)
        #expect(monitor.isPolling)
        monitor.addObserver(b)
        monitor.removeObserver(a)
        #expect(monitor.isPolling)
        monitor.removeObserver(b)
        #expect(!monitor.isPolling)

        monitor.addObserver(a)
        #expect(monitor.isPolling)
        monitor.removeObserver(a)
        #expect(!monitor.isPolling)
    }

    @Test func timerStopsOnceTheLastObserverIsDeallocated() {
        let source = FakeMemoryPressureSource(.psi(50))
        let monitor = MemoryPressureMonitor.forTesting(source, startsTimer: true)
        weak var probe: RecordingObserver?
        do {
            let observer = RecordingObserver()
            monitor.addObserver(observer)
            probe = observer
            #expect(monitor.isPolling)
        }
        #expect(probe == nil)
        // The next tick (here: an explicit poll) prunes it and stops the timer.
        #expect(!monitor.poll())
        #expect(!monitor.isPolling)
        #expect(source.readCount == 0)
    }

    @Test func observerRemovingItselfInItsDeinitStopsTheTimer() {
        final class SelfRemovingObserver: MemoryPressureObserver {
            let monitor: MemoryPressureMonitor
            init(monitor: MemoryPressureMonitor) { self.monitor = monitor }
            deinit { monitor.removeObserver(self) }
            func didReceiveMemoryPressure() {}
            func didEnterBackground() {}
        }
        let monitor = MemoryPressureMonitor.forTesting(FakeMemoryPressureSource(), startsTimer: true)
        do {
            let observer = SelfRemovingObserver(monitor: monitor)
            monitor.addObserver(observer)
            #expect(monitor.isPolling)
        }
        #expect(!monitor.isPolling)
    }

    @Test func withoutStartsTimerThereIsNoTimer() {
        let monitor = MemoryPressureMonitor.forTesting(FakeMemoryPressureSource(), startsTimer: false)
        let observer = RecordingObserver()
        monitor.addObserver(observer)
        #expect(!monitor.isPolling)
    }

    /// The one test that lets the real timer run: it checks the timer calls
    /// `poll()`. It waits for the notification (no sleeping), bounded by the suite's time limit.
    @Test func timerPollsTheSource() async {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
        let source = FakeMemoryPressureSource(.psi(50))
        let monitor = MemoryPressureMonitor.forTesting(
            source, configuration: Configuration(pollInterval: .milliseconds(10)), startsTimer: true)
        let observer = RecordingObserver(onPressure: { _ in continuation.yield() })
        monitor.addObserver(observer)
        var events = stream.makeAsyncIterator()
        await events.next()
        #expect(source.readCount >= 1)
        #expect(observer.pressureCount >= 1)
        monitor.removeObserver(observer)
        #expect(!monitor.isPolling)
    }

    // MARK: Re-entrancy: notifications run outside the lock

    @Test func observerMayRemoveItselfDuringPoll() {
        let source = FakeMemoryPressureSource(.psi(50))
        let monitor = MemoryPressureMonitor.forTesting(source, startsTimer: true)
        let observer = RecordingObserver(onPressure: { monitor.removeObserver($0) })
        monitor.addObserver(observer)

        #expect(monitor.poll())
        #expect(observer.pressureCount == 1)
        #expect(monitor.observerCount == 0)
        #expect(!monitor.isPolling)
    }

    @Test func observerMayUseTheMonitorDuringNotifications() {
        let source = FakeMemoryPressureSource(.psi(50))
        let monitor = MemoryPressureMonitor.forTesting(source, configuration: Configuration(cooldown: nil))
        let late = RecordingObserver()
        let observer = RecordingObserver(
            onPressure: { _ in
                monitor.addObserver(late)
                _ = monitor.configuration
                _ = monitor.isPolling
                _ = monitor.poll()  // still high: no new crossing, so no recursion
            },
            onBackground: { monitor.removeObserver($0) }
        )
        monitor.addObserver(observer)

        #expect(monitor.poll())
        #expect(monitor.observerCount == 2)
        monitor.notifyMemoryPressure()
        monitor.notifyDidEnterBackground()
        #expect(monitor.observerCount == 1)
        #expect(observer.pressureCount == 2)
        #expect(late.pressureCount == 1)
    }
}

/// Hammers one monitor from several threads. Named `...Concurrency...` so CI
/// runs it under the thread sanitizer.
@Suite(.timeLimit(.minutes(5))) struct MemoryPressureConcurrencyTests {
    @Test func concurrentRegistrationPollingAndNotifying() {
        let source = FakeMemoryPressureSource(.psi(0))
        let monitor = MemoryPressureMonitor.forTesting(
            source, configuration: .init(pollInterval: .seconds(3600), cooldown: Duration.zero), startsTimer: true)
        let keeper = RecordingObserver()
        monitor.addObserver(keeper)

        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for step in 0..<200 {
                let observer = RecordingObserver(onPressure: { monitor.removeObserver($0) })
                monitor.addObserver(observer)
                switch (worker + step) % 4 {
                case 0: source.reading = .psi(Double(step % 20))
                case 1: monitor.poll()
                case 2: monitor.notifyMemoryPressure()
                default: _ = monitor.observerCount
                }
                if step.isMultiple(of: 2) { monitor.removeObserver(observer) }
                // Odd steps drop the observer without removing it: pruning must cope.
            }
        }

        #expect(monitor.observerCount == 1)
        #expect(monitor.isPolling)
        monitor.removeObserver(keeper)
        #expect(!monitor.isPolling)
        #expect(keeper.pressureCount > 0)
    }
}
