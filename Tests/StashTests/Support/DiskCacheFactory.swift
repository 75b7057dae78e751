import Logging
@testable import Stash

/// The disk-cache configuration every test starts from: no background trim (tests
/// trim explicitly), a manual clock, a test logger. Each parameter overrides one
/// setting.
func testDiskConfiguration(
    storage: DiskStorageKind = .default,
    countLimit: Int = .max,
    sizeLimit: Int = .max,
    ageLimit: Duration? = nil,
    clock: any CacheClock = ManualClock(start: 1_700_000_000_000_000_000),
    logger: Logger = Logger(label: "test")
) -> DiskCacheConfiguration {
    DiskCacheConfiguration(
        storage: storage, countLimit: countLimit, sizeLimit: sizeLimit, ageLimit: ageLimit,
        autoTrimInterval: nil, clock: clock, logger: logger)
}

/// A disk cache in `directory` with ``testDiskConfiguration(storage:countLimit:sizeLimit:ageLimit:clock:logger:)``,
/// closed before the directory is deleted.
func makeDiskCache<Value: Sendable>(
    _ directory: TemporaryDirectory,
    codec: DiskCodec<Value>,
    storage: DiskStorageKind = .default,
    countLimit: Int = .max,
    sizeLimit: Int = .max,
    ageLimit: Duration? = nil,
    clock: ManualClock = ManualClock(start: 1_700_000_000_000_000_000),
    logger: Logger = Logger(label: "test")
) throws -> DiskCache<Value> {
    let cache = try DiskCache<Value>(
        directory: directory.path, codec: codec,
        configuration: testDiskConfiguration(
            storage: storage, countLimit: countLimit, sizeLimit: sizeLimit, ageLimit: ageLimit, clock: clock, logger: logger))
    directory.closeBeforeRemoval(cache)
    return cache
}
