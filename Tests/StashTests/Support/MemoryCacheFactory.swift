import Logging
@testable import Stash

extension MemoryCache.Configuration {
    /// The configuration every test cache starts from: a manual clock, no
    /// background timer, values released on the caller's thread, and no
    /// reaction to entering the background.
    static func forTesting(
        countLimit: Int = .max,
        costLimit: Int = .max,
        ageLimit: Duration? = nil,
        policy: EvictionPolicy = .lru,
        clock: any CacheClock = ManualClock(),
        removesAllOnMemoryPressure: Bool = true
    ) -> Self {
        Self(
            label: "test", countLimit: countLimit, costLimit: costLimit, ageLimit: ageLimit, policy: policy,
            autoTrimInterval: nil, releasesValuesInBackground: false,
            removesAllOnMemoryPressure: removesAllOnMemoryPressure, removesAllOnEnteringBackground: false,
            clock: clock, logger: Logger(label: "test"))
    }
}

/// A cache for tests, built from ``MemoryCache/Configuration/forTesting(countLimit:costLimit:ageLimit:policy:clock:removesAllOnMemoryPressure:)``
/// listening to a pressure monitor the test drives itself, and checking the
/// engine's invariants after every mutation (debug builds). Tests of tens of
/// thousands of entries turn that off (it is O(n) per mutation) and call
/// `_checkInvariants()` between phases instead.
func makeMemoryCache<Key: Hashable & Sendable, Value: Sendable>(
    _ keyType: Key.Type = String.self,
    _ valueType: Value.Type = Int.self,
    countLimit: Int = .max,
    costLimit: Int = .max,
    ageLimit: Duration? = nil,
    policy: EvictionPolicy = .lru,
    clock: ManualClock = ManualClock(),
    removesAllOnMemoryPressure: Bool = true,
    monitor: MemoryPressureMonitor = .forTesting(FakeMemoryPressureSource()),
    checksInvariants: Bool = true
) -> MemoryCache<Key, Value> {
    MemoryCache<Key, Value>(
        configuration: .forTesting(
            countLimit: countLimit, costLimit: costLimit, ageLimit: ageLimit, policy: policy, clock: clock,
            removesAllOnMemoryPressure: removesAllOnMemoryPressure),
        memoryPressureMonitor: monitor, checksInvariants: checksInvariants)
}
