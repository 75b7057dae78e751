import Dispatch
import Logging

/// The background timer behind a cache's `autoTrimInterval`.
///
/// It calls its owner's trim through a weak reference, so it never keeps the
/// cache alive; the owner cancels it in `deinit` or when the interval changes.
/// Not thread-safe: the owner guards it with its lock.
struct AutoTrimTimer {
    private var timer: (any DispatchSourceTimer)?
    /// The interval in force, or nil when auto-trim is off.
    private(set) var interval: Duration?

    init() {}

    /// Checks a requested interval: a zero or negative one is logged and turns auto-trim off.
    static func validated(_ interval: Duration?, logger: Logger) -> Duration? {
        if let interval, interval <= .zero {
            logger.warning("autoTrimInterval must be positive (got \(interval)); auto-trim disabled")
            return nil
        }
        return interval
    }

    /// Cancels any running timer and, if `interval` is not nil, starts one that
    /// calls `trim` on `owner` every `interval` on `queue`.
    mutating func reschedule<Owner: AnyObject & Sendable>(
        every interval: Duration?, on queue: DispatchQueue, owner: Owner,
        _ trim: @escaping @Sendable (Owner) -> Void
    ) {
        cancel()
        self.interval = interval
        guard let interval else { return }
        let nanos = Int(clamping: interval.nanosecondsClamped)
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(
            deadline: .now() + .nanoseconds(nanos), repeating: .nanoseconds(nanos),
            leeway: .nanoseconds(Swift.max(nanos / 10, 1_000_000)))
        timer.setEventHandler { [weak owner] in
            if let owner { trim(owner) }
        }
        timer.resume()
        self.timer = timer
    }

    /// Stops the timer. Safe to call when none is running.
    mutating func cancel() {
        timer?.cancel()
        timer = nil
        interval = nil
    }
}
