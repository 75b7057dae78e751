#if Redis
extension RedisCacheTier {
    /// How a ``RedisCacheTier`` names its keys, announces changes and reacts to outages.
    ///
    /// Thread-safety: a value type, `Sendable`.
    public struct Configuration: Sendable {
        /// Prepended to every key, so that several caches (or applications) share
        /// one Redis without colliding; also the pattern ``RedisCacheTier/removeAll()``
        /// scans. Default `stash:`.
        public var keyPrefix: String
        /// The pub/sub channel invalidations travel on. Default `nil`: the key
        /// prefix followed by `invalidations`.
        public var invalidationChannel: String?
        /// Whether writes and removals publish an invalidation. Default `true`;
        /// turn it off only for a tier no other process caches locally.
        public var publishesInvalidations: Bool
        /// The largest encoded value the tier sends; larger ones fail with
        /// `.valueTooLarge` before reaching Redis. Default 512 MiB, Redis's default
        /// `proto-max-bulk-len`; set it to the server's limit if that is lower.
        public var maximumValueSize: Int
        /// Consecutive failures to reach Redis after which the circuit breaker
        /// opens. Default 3: one lost packet should not take the tier offline.
        public var failureThreshold: Int
        /// The longest the open breaker fails calls fast before letting one probe
        /// through. Default 1 second. The first probe comes after an eighth of it
        /// (125 ms), and the wait doubles after each failed probe up to it: callers
        /// share again within a probe's wait of Redis answering (at most this long),
        /// and a long outage costs one probe per this duration. Negative counts as zero.
        public var openDuration: Duration
        /// Whether the tier empties its namespace when it sees that a Redis primary restarted
        /// (its `run_id` changed across a lost subscription). Default `true`: a server restarted
        /// from its append-only file or snapshot reloads values that may be older than what the
        /// fleet wrote while it was down, and an instance that died during the outage would never
        /// remove them. The first instance to see the restart empties the namespace (one `SCAN`
        /// and `UNLINK`s, then an invalidation of everything); the fleet then reloads what it
        /// needs. Set `false` to keep a restarted server's data (when no instance writes while
        /// it is down, say).
        public var emptiesAfterRestart: Bool

        /// Creates a configuration with the defaults above.
        ///
        /// - Parameter keyPrefix: The namespace. Default `stash:`.
        public init(keyPrefix: String = "stash:") {
            self.keyPrefix = keyPrefix
            self.invalidationChannel = nil
            self.publishesInvalidations = true
            self.maximumValueSize = 512 * 1024 * 1024
            self.failureThreshold = 3
            self.openDuration = .seconds(1)
            self.emptiesAfterRestart = true
        }

        /// The channel actually used.
        var channel: String { invalidationChannel ?? keyPrefix + "invalidations" }
    }
}
#endif  // Redis
