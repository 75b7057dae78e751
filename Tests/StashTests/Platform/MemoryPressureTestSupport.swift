@testable import Stash

/// A source that returns whatever the test last set, and counts reads.
final class FakeMemoryPressureSource: MemoryPressureSource, @unchecked Sendable {
    // @unchecked Sendable: `current` and `reads` are only touched with `lock` held.
    private let lock = Lock()
    private var current: MemoryPressureReading
    private var reads = 0

    init(_ reading: MemoryPressureReading = MemoryPressureReading()) {
        current = reading
    }

    /// The reading the next `read()` returns.
    var reading: MemoryPressureReading {
        get { lock.withLock { current } }
        set { lock.withLock { current = newValue } }
    }

    /// How many times `read()` was called.
    var readCount: Int { lock.withLock { reads } }

    func read() -> MemoryPressureReading {
        lock.withLock {
            reads += 1
            return current
        }
    }
}

/// An observer that counts its notifications and optionally runs a hook inside them.
final class RecordingObserver: MemoryPressureObserver, @unchecked Sendable {
    // @unchecked Sendable: the counters are only touched with `lock` held; the
    // hooks are immutable `@Sendable` closures.
    private let lock = Lock()
    private var pressure = 0
    private var background = 0
    private let onPressure: @Sendable (RecordingObserver) -> Void
    private let onBackground: @Sendable (RecordingObserver) -> Void

    init(
        onPressure: @escaping @Sendable (RecordingObserver) -> Void = { _ in },
        onBackground: @escaping @Sendable (RecordingObserver) -> Void = { _ in }
    ) {
        self.onPressure = onPressure
        self.onBackground = onBackground
    }

    var pressureCount: Int { lock.withLock { pressure } }
    var backgroundCount: Int { lock.withLock { background } }

    func didReceiveMemoryPressure() {
        lock.withLock { pressure += 1 }
        onPressure(self)
    }

    func didEnterBackground() {
        lock.withLock { background += 1 }
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
