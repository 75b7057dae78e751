extension MemoryPressureMonitor {
    /// When the monitor considers memory short, and how often it looks.
    ///
    /// Used on Linux only; Apple platforms are told by the system. A plain
    /// value: `Sendable`, O(1) to copy, no thread-safety concerns of its own.
    public struct Configuration: Sendable, Equatable {
        /// PSI threshold, in percent: pressure when `some avg10` of
        /// `/proc/pressure/memory` — the share of the last 10 seconds in which
        /// at least one task stalled waiting for memory — is at or above it.
        ///
        /// Defaults to 10: a stall one tenth of the time means reclaim is
        /// already hurting latency, while an idle or healthy machine reads 0.
        /// `nil` ignores PSI; 0 or less means always under pressure.
        public var psiThreshold: Double?

        /// cgroup threshold, as a fraction of the limit (0–1): pressure when
        /// the process's memory cgroup uses at least this share of its limit.
        ///
        /// Defaults to 0.90, leaving caches room to shrink before the kernel
        /// reclaims or kills at the limit. `nil` ignores the cgroup's usage.
        /// Without a cgroup limit there is no signal.
        public var cgroupUsageThreshold: Double?

        /// Whether an increase of the `high`, `max` or `oom` counters of a
        /// cgroup v2 `memory.events` counts as pressure. Defaults to `true`:
        /// each increase means the kernel already throttled or reclaimed.
        public var watchesCgroupEvents: Bool

        /// How often the timer samples. Defaults to 1 second: reading three
        /// small kernel files costs microseconds, and PSI's shortest average
        /// spans 10 seconds. Values below 10 milliseconds count as 10 ms.
        public var pollInterval: Duration

        /// While pressure persists, how long after a notification the next
        /// one comes. Defaults to 30 seconds: long enough not to flush caches
        /// on every sample, short enough to trim a cache that refilled.
        /// `nil` notifies only when pressure rises, never while it persists;
        /// zero (or less) notifies at every sample while it persists.
        /// Rises after pressure ended always notify at once.
        public var cooldown: Duration?

        /// Creates a configuration; every parameter defaults to the documented
        /// default. O(1); does not validate: see each property for how odd
        /// values are treated.
        ///
        /// - Parameters:
        ///   - psiThreshold: PSI `some avg10` threshold in percent; `nil` disables. Default 10.
        ///   - cgroupUsageThreshold: cgroup usage / limit threshold; `nil` disables. Default 0.90.
        ///   - watchesCgroupEvents: Whether `memory.events` increases count. Default `true`.
        ///   - pollInterval: Sampling interval. Default 1 second.
        ///   - cooldown: Repeat interval while pressure persists; `nil` never repeats. Default 30 seconds.
        public init(
            psiThreshold: Double? = 10,
            cgroupUsageThreshold: Double? = 0.90,
            watchesCgroupEvents: Bool = true,
            pollInterval: Duration = .seconds(1),
            cooldown: Duration? = .seconds(30)
        ) {
            self.psiThreshold = psiThreshold
            self.cgroupUsageThreshold = cgroupUsageThreshold
            self.watchesCgroupEvents = watchesCgroupEvents
            self.pollInterval = pollInterval
            self.cooldown = cooldown
        }
    }
}
