import StashTestSupport
import Logging
@testable import Stash

/// A memory cache for get-or-load tests: a manual clock, `options` as its
/// load options, and its log kept by `log`.
func makeLoadingCache(
    clock: ManualClock = ManualClock(),
    options: LoadOptions = LoadOptions(),
    countLimit: Int = .max,
    log: LogRecorder = LogRecorder(),
    loadedValueCost: (@Sendable (Int) -> Int)? = nil
) -> MemoryCache<String, Int> {
    var configuration = MemoryCache<String, Int>.Configuration.forTesting(countLimit: countLimit, clock: clock)
    configuration.loadOptions = options
    configuration.logger = log.logger
    configuration.loadedValueCost = loadedValueCost
    return MemoryCache(
        configuration: configuration, memoryPressureMonitor: .forTesting(FakeMemoryPressureSource()),
        checksInvariants: true)
}

/// A loader that counts its calls, can be held at a gate, and returns or
/// throws what the test says.
final class ScriptedLoader: Sendable {
    private let state = LockedValue((value: 0, error: (any Error)?.none))
    let calls = Counter()
    let gate: TestGate?

    init(value: Int = 1, held: Bool = false) {
        state.withLock { $0.value = value }
        gate = held ? TestGate() : nil
    }

    /// What later loads return.
    func willReturn(_ value: Int) { state.withLock { $0 = (value, nil) } }

    /// What later loads throw.
    func willThrow(_ error: any Error) { state.withLock { $0.error = error } }

    /// The loader to pass to the cache.
    var load: @Sendable (String) async throws -> Int {
        { [self] _ in
            calls.increment()
            if let gate { try await gate.wait() }
            let (value, error) = state.withLock { $0 }
            if let error { throw error }
            return value
        }
    }
}
