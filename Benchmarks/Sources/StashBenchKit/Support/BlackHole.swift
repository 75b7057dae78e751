import Synchronization

/// Where results of timed loops go, so that the optimizer cannot prove them
/// unused and delete the work that produced them.
private let sinkStorage = Atomic<Int>(0)

/// Consumes a value opaquely. Call it once per timed batch with a checksum of
/// what the batch read (not once per operation: it is not free).
@inline(never)
public func blackHole(_ value: Int) {
    sinkStorage.store(value, ordering: .relaxed)
}
