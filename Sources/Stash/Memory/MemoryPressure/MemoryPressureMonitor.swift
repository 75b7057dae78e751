import Dispatch

/// Watches the system's memory pressure and tells every registered cache.
///
/// There is one process-wide monitor, ``shared``, that every cache registers
/// with. It costs nothing while no cache is registered.
///
/// **Linux.** While at least one observer is alive, a single timer on a
/// utility-QoS dispatch queue samples, every ``Configuration/pollInterval``:
/// - PSI: `some avg10` of `/proc/pressure/memory`, compared with
///   ``Configuration/psiThreshold``;
/// - the process's memory cgroup (found through `/proc/self/cgroup`, falling
///   back to the hierarchy's root): usage / limit, compared with
///   ``Configuration/cgroupUsageThreshold`` (v2 `memory.current` /
///   `memory.max`, v1 `memory.usage_in_bytes` / `memory.limit_in_bytes`; no
///   limit means no signal), and on cgroup v2 any increase of the `high`,
///   `max` or `oom` counters of `memory.events`.
///
/// The process is *under pressure* while any enabled signal is at or above
/// its threshold, or the event counters grew since the previous sample. The
/// monitor is edge-triggered: it notifies when the process goes from not under
/// pressure to under pressure, and then, while pressure persists, once more
/// every ``Configuration/cooldown``. When pressure ends it re-arms, so the
/// next rise notifies at once. The first sample after the first observer
/// registers counts as a rise if pressure is already high. The timer stops when the last observer is
/// removed, or at the next tick after the last observer was deallocated.
/// Signals that cannot be read (no PSI, no cgroup) are ignored, and reported
/// once at debug level through the logger labelled `Stash.MemoryPressure`.
///
/// **Apple platforms.** Once the first observer registers, the monitor
/// listens to the dispatch memory-pressure source (warning and critical) and,
/// where UIKit is available, to `UIApplication`'s memory-warning and
/// did-enter-background notifications. These are kernel and notification
/// events, not polling, so they stay registered for the life of the process.
/// ``configuration`` has no effect there.
///
/// Thread-safe: every method may be called from any thread. State is guarded
/// by a lock that is held only briefly and never while an observer runs; no
/// method blocks except to wait for that lock, and ``notifyMemoryPressure()``
/// to run the observers.
public final class MemoryPressureMonitor: @unchecked Sendable {
    // @unchecked Sendable: the stored `let`s are immutable and Sendable; every
    // `var` below is read and written only with `lock` held. `pollLock` only
    // serialises `poll()` so two samples cannot interleave their updates.

    /// The process-wide monitor every cache uses.
    ///
    /// On Linux it polls the kernel's files; on Apple platforms it listens to
    /// system events; elsewhere it only relays ``notifyMemoryPressure()``.
    /// Created on first use, which reads `/proc/self/cgroup` once on Linux;
    /// no timer runs until a cache registers. Thread-safe; O(1) after the
    /// first access.
    public static let shared: MemoryPressureMonitor = {
        #if os(Linux) || os(Android)
        return MemoryPressureMonitor(source: LinuxMemoryPressureSource(), startsTimer: true)
        #elseif canImport(Darwin)
        return MemoryPressureMonitor(
            source: NoMemoryPressureSource(), startsTimer: false, listensToSystemEvents: true)
        #else
        return MemoryPressureMonitor(source: NoMemoryPressureSource(), startsTimer: false)
        #endif
    }()

    /// Polling intervals below this are raised to it: 10 milliseconds.
    static let minimumPollInterval: Duration = .milliseconds(10)

    private let source: any MemoryPressureSource
    private let clock: any CacheClock
    private let startsTimer: Bool
    private let listensToSystemEvents: Bool
    private let lock = Lock()
    private let pollLock = Lock()

    // Guarded by `lock`.
    private var observers: [ObjectIdentifier: WeakObserver] = [:]
    private var currentConfiguration: Configuration
    private var timer: (any DispatchSourceTimer)?
    private var state = PressureState()
    private var systemEventsStarted = false
    /// Keeps the platform's event registrations alive (Apple platforms only).
    private var systemEvents: AnyObject?

    /// Creates a monitor. Tests make their own instead of using ``shared``.
    ///
    /// - Parameters:
    ///   - source: Where samples come from.
    ///   - configuration: Thresholds and intervals. Defaults to `Configuration()`: every threshold at its default.
    ///   - clock: Measures the cooldown. Defaults to the system's monotonic clock.
    ///   - startsTimer: Whether to poll `source` on a timer while observers
    ///     exist. With `false`, samples are taken only by ``poll()``.
    ///   - listensToSystemEvents: Apple platforms: whether to subscribe to the
    ///     system's memory events on first registration. Ignored elsewhere.
    init(
        source: any MemoryPressureSource,
        configuration: Configuration = Configuration(),
        clock: any CacheClock = SystemClock(),
        startsTimer: Bool,
        listensToSystemEvents: Bool = false
    ) {
        self.source = source
        self.currentConfiguration = configuration
        self.clock = clock
        self.startsTimer = startsTimer
        self.listensToSystemEvents = listensToSystemEvents
    }

    deinit {
        timer?.cancel()
    }

    /// The thresholds and intervals used from the next sample on.
    ///
    /// Setting it reschedules a running timer to the new
    /// ``Configuration/pollInterval``. Each read and each write is atomic, but
    /// a read-modify-write such as `shared.configuration.cooldown = nil` is
    /// not: when several threads change it, the last write wins.
    ///
    /// Defaults to `Configuration()`: every threshold at its default. Changing the configuration of
    /// ``shared`` affects every cache.
    ///
    /// - Complexity: O(1). Thread-safe; blocks only to take a lock briefly.
    public var configuration: Configuration {
        get { lock.withLock { currentConfiguration } }
        set {
            lock.withLock {
                currentConfiguration = newValue
                if let timer { schedule(timer, every: newValue.pollInterval) }
            }
        }
    }

    // MARK: Observers

    /// Registers `observer`, held weakly, and starts the timer (Linux) or the
    /// system-event subscriptions (Apple platforms) if it is the first.
    ///
    /// Registering an observer twice has no further effect.
    ///
    /// - Complexity: O(1) amortised. Thread-safe; takes a lock briefly.
    func addObserver(_ observer: any MemoryPressureObserver) {
        lock.withLock {
            observers[ObjectIdentifier(observer)] = WeakObserver(observer: observer)
            _startTimer()
        }
        if listensToSystemEvents {
            startSystemEventsIfNeeded()
        }
    }

    /// Unregisters `observer`, prunes deallocated observers, and stops the
    /// timer if no live observer remains.
    ///
    /// Safe to call from the observer's `deinit` and from inside a
    /// notification. Removing an observer that is not registered does nothing.
    ///
    /// - Complexity: O(n) in the number of registered observers.
    ///   Thread-safe; takes a lock briefly.
    func removeObserver(_ observer: any MemoryPressureObserver) {
        let id = ObjectIdentifier(observer)
        let remaining = lock.withLock {
            observers[id] = nil
            return _liveObservers()
        }
        // The strong references taken while pruning die here, outside the lock:
        // if one is the last, the observer's deinit may safely call back in.
        withExtendedLifetime(remaining) {}
    }

    /// The number of live registered observers, after pruning deallocated ones.
    var observerCount: Int {
        lock.withLock { _liveObservers() }.count
    }

    /// Whether the polling timer exists now: only while live observers exist
    /// and the monitor was created with `startsTimer: true`.
    var isPolling: Bool {
        lock.withLock { timer != nil }
    }

    // MARK: Notifying

    /// Tells every registered cache that memory is short, now, regardless of
    /// thresholds. For apps that have their own signal of memory pressure.
    ///
    /// Observers run synchronously on the calling thread, one after the other,
    /// outside the monitor's lock; this call returns when they all have. It
    /// does not change the edge-triggering state of the monitor.
    ///
    /// - Complexity: O(n) in the number of registered observers, plus their work.
    ///   Thread-safe.
    public func notifyMemoryPressure() {
        for observer in lock.withLock({ _liveObservers() }) {
            observer.didReceiveMemoryPressure()
        }
    }

    /// Tells every registered observer that the app entered the background.
    /// Called by the Apple-platform event subscriptions; synchronous, outside the lock.
    func notifyDidEnterBackground() {
        for observer in lock.withLock({ _liveObservers() }) {
            observer.didEnterBackground()
        }
    }

    /// Takes one sample from the source and notifies the observers if the
    /// configuration says so. The timer calls this; tests call it directly.
    ///
    /// Does nothing (and reads nothing) while no live observer is registered.
    /// Concurrent calls are serialised. Observers run synchronously on the
    /// calling thread, outside the lock.
    ///
    /// - Returns: Whether this sample fired a notification.
    @discardableResult
    func poll() -> Bool {
        let outcome: (fired: Bool, recipients: [any MemoryPressureObserver]) = pollLock.withLock {
            let isWatched = !lock.withLock { _liveObservers() }.isEmpty
            guard isWatched else { return (false, []) }
            let reading = source.read()
            let now = clock.nanosecondsNow
            return lock.withLock {
                let (fires, next) = Self.evaluate(
                    reading, after: state, configuration: currentConfiguration, now: now)
                state = next
                return (fires, fires ? _liveObservers() : [])
            }
        }
        for observer in outcome.recipients {
            observer.didReceiveMemoryPressure()
        }
        return outcome.fired
    }

    // MARK: Private (names starting with `_` expect `lock` to be held)

    /// Strong references to the live observers; prunes dead entries, and when
    /// none is left stops the timer and forgets the pressure history.
    ///
    /// Callers must return the array out of the lock before dropping it, so
    /// that an observer's last release (and its deinit) never runs under the lock.
    private func _liveObservers() -> [any MemoryPressureObserver] {
        var live: [any MemoryPressureObserver] = []
        live.reserveCapacity(observers.count)
        var dead: [ObjectIdentifier] = []
        for (id, entry) in observers {
            if let observer = entry.observer {
                live.append(observer)
            } else {
                dead.append(id)
            }
        }
        for id in dead {
            observers[id] = nil
        }
        if live.isEmpty {
            timer?.cancel()
            timer = nil
            state = PressureState()
        }
        return live
    }

    /// The queue the polling timer fires on.
    static let pollQueue = DispatchQueue(label: "Stash.MemoryPressureMonitor.poll", qos: .utility)

    private func _startTimer() {
        guard startsTimer, timer == nil else { return }
        // Its own serial queue, not a global one: serial queues run on an overcommitting pool
        // that starts a thread when the others are busy, where a global queue is as wide as
        // the machine has cores, so two blocked work items there (a caller's blocking loader,
        // say) would stop the polling, and with it the pressure response, until they end.
        let timer = DispatchSource.makeTimerSource(queue: Self.pollQueue)
        // The handler holds the monitor strongly. A weak reference would give the
        // monitor (`shared` lives for the whole process) a weak-reference side
        // table, which LeakSanitizer cannot trace through the encoded reference
        // count and reports as leaked at exit. No cycle outlives its use: the timer
        // is cancelled, releasing the handler, as soon as no live observer remains
        // (on removeObserver, or at the next poll once the observers are gone).
        timer.setEventHandler { [self] in
            _ = poll()
        }
        schedule(timer, every: currentConfiguration.pollInterval)
        timer.resume()
        self.timer = timer
    }

    private func schedule(_ timer: any DispatchSourceTimer, every interval: Duration) {
        let nanoseconds = Int(
            clamping: max(interval.nanosecondsClamped, Self.minimumPollInterval.nanosecondsClamped))
        timer.schedule(
            deadline: .now() + .nanoseconds(nanoseconds),
            repeating: .nanoseconds(nanoseconds),
            leeway: .nanoseconds(nanoseconds / 10)
        )
    }

    private func startSystemEventsIfNeeded() {
        let isFirst = lock.withLock {
            defer { systemEventsStarted = true }
            return !systemEventsStarted
        }
        guard isFirst else { return }
        // Subscribed outside the lock: a system callback may already be running
        // and waiting for it.
        #if canImport(Darwin)
        let events = DarwinMemoryEvents(monitor: self)
        lock.withLock { systemEvents = events }
        #endif
    }
}

/// A weak reference to an observer.
private struct WeakObserver {
    weak var observer: (any MemoryPressureObserver)?
}
