import Logging
@testable import Stash

/// A cache for tests: manual clock, no background timer, values released on the caller's thread.
func makeMemoryCache<Key: Hashable & Sendable, Value: Sendable>(
    _ keyType: Key.Type = String.self,
    _ valueType: Value.Type = Int.self,
    countLimit: Int = .max,
    costLimit: Int = .max,
    ageLimit: Duration? = nil,
    policy: EvictionPolicy = .lru,
    clock: ManualClock = ManualClock(),
    removesAllOnMemoryPressure: Bool = true,
    monitor: MemoryPressureMonitor = .forTesting(FakeMemoryPressureSource())
) -> MemoryCache<Key, Value> {
    MemoryCache<Key, Value>(
        name: "test", countLimit: countLimit, costLimit: costLimit, ageLimit: ageLimit, policy: policy,
        autoTrimInterval: nil, releasesValuesInBackground: false,
        removesAllOnMemoryPressure: removesAllOnMemoryPressure, removesAllOnEnteringBackground: false,
        clock: clock, logger: Logger(label: "test"), memoryPressureMonitor: monitor)
}
