@testable import Stash

/// A source that returns whatever the test last set, and counts reads.
final class FakeMemoryPressureSource: MemoryPressureSource, Sendable {
    private let state: LockedValue<(current: MemoryPressureReading, reads: Int)>

    init(_ reading: MemoryPressureReading = MemoryPressureReading()) {
        state = LockedValue((reading, 0))
    }

    /// The reading the next `read()` returns.
    var reading: MemoryPressureReading {
        get { state.withLock { $0.current } }
        set { state.withLock { $0.current = newValue } }
    }

    /// How many times `read()` was called.
    var readCount: Int { state.withLock { $0.reads } }

    func read() -> MemoryPressureReading {
        state.withLock {
            $0.reads += 1
            return $0.current
        }
    }
}

/// An observer that counts its notifications and optionally runs a hook inside them.
final class RecordingObserver: MemoryPressureObserver, Sendable {
    private let counts = LockedValue((pressure: 0, background: 0))
    private let onPressure: @Sendable (RecordingObserver) -> Void
    private let onBackground: @Sendable (RecordingObserver) -> Void

    init(
        onPressure: @escaping @Sendable (RecordingObserver) -> Void = { _ in },
        onBackground: @escaping @Sendable (RecordingObserver) -> Void = { _ in }
    ) {
        self.onPressure = onPressure
        self.onBackground = onBackground
    }

    var pressureCount: Int { counts.withLock { $0.pressure } }
    var backgroundCount: Int { counts.withLock { $0.background } }

    func didReceiveMemoryPressure() {
        counts.withLock { $0.pressure += 1 }
        onPressure(self)
    }

    func didEnterBackground() {
        counts.withLock { $0.background += 1 }
        onBackground(self)
    }
}

extension MemoryPressureMonitor {
    /// A monitor over `source` for tests: explicit `poll()` only unless `startsTimer`,
    /// and a timer interval long enough never to fire during a test.
    static func forTesting(
        _ source: any MemoryPressureSource,
        configuration: Configuration = Configuration(pollInterval: .seconds(3600)),
        clock: any CacheClock = ManualClock(),
        startsTimer: Bool = false
    ) -> MemoryPressureMonitor {
        MemoryPressureMonitor(source: source, configuration: configuration, clock: clock, startsTimer: startsTimer)
    }
}

extension MemoryPressureReading {
    static func psi(_ value: Double) -> MemoryPressureReading {
        MemoryPressureReading(psiSomeAvg10: value)
    }
}
