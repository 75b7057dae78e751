/// One sample of the signals ``MemoryPressureMonitor`` polls.
///
/// Every field is optional: `nil` means the signal is not available here (no
/// PSI in the kernel, no cgroup, an unreadable file), and the monitor simply
/// ignores it.
struct MemoryPressureReading: Sendable, Equatable {
    /// PSI `some avg10` from `/proc/pressure/memory`: the percentage (0–100) of
    /// the last 10 seconds during which at least one task stalled waiting for
    /// memory.
    var psiSomeAvg10: Double?

    /// Bytes the process's memory cgroup uses now (v2 `memory.current`,
    /// v1 `memory.usage_in_bytes`).
    var cgroupUsageBytes: Int64?

    /// The cgroup's memory limit in bytes (v2 `memory.max`, v1
    /// `memory.limit_in_bytes`); `nil` when there is no limit or it is unknown.
    var cgroupLimitBytes: Int64?

    /// v2 only: the sum of the `high`, `max` and `oom` counters in
    /// `memory.events`. Only its increase between two readings matters.
    var cgroupEventCount: UInt64?

    init(
        psiSomeAvg10: Double? = nil,
        cgroupUsageBytes: Int64? = nil,
        cgroupLimitBytes: Int64? = nil,
        cgroupEventCount: UInt64? = nil
    ) {
        self.psiSomeAvg10 = psiSomeAvg10
        self.cgroupUsageBytes = cgroupUsageBytes
        self.cgroupLimitBytes = cgroupLimitBytes
        self.cgroupEventCount = cgroupEventCount
    }

    /// `usage / limit`, or `nil` when either is unknown or the limit is not positive.
    var cgroupUsageRatio: Double? {
        guard let usage = cgroupUsageBytes, let limit = cgroupLimitBytes, limit > 0 else { return nil }
        return Double(usage) / Double(limit)
    }
}

/// Where ``MemoryPressureMonitor`` gets its samples: the kernel's files on
/// Linux, a fake in tests.
///
/// Conformers must be thread-safe. ``read()`` is called from the monitor's
/// timer on a utility-QoS dispatch queue, never concurrently with itself for
/// one monitor, and must not call back into the monitor.
protocol MemoryPressureSource: Sendable {
    /// Takes one sample. Must not throw or trap: an unavailable signal is `nil`.
    func read() -> MemoryPressureReading
}

/// A source with no signals: the polling source on platforms that have no
/// files to poll (Apple platforms rely on system events instead).
struct NoMemoryPressureSource: MemoryPressureSource {
    /// Returns an empty reading.
    func read() -> MemoryPressureReading { MemoryPressureReading() }
}
