/// What a loader reports about one load to the engine running it, through a
/// task-local value: whether another instance of the fleet answered it.
///
/// `Cache`'s fleet loader marks it when it returns the value another
/// instance loaded, so that the engine counts a fleet read, not a load.
// @unchecked Sendable: one load's task writes `answeredByFleet` and then reads
// it after the loader returns, in that order; no other task sees the object.
final class LoadReport: @unchecked Sendable {
    /// The report of the load the current task runs, if any.
    @TaskLocal static var current: LoadReport?

    /// Whether the value came from another instance of the fleet.
    var answeredByFleet = false
}
