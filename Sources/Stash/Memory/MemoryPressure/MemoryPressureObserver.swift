/// Something that reacts to memory pressure, such as a memory cache.
///
/// Registered with ``MemoryPressureMonitor/addObserver(_:)`` and held
/// **weakly**: registering does not keep the observer alive, and a
/// deallocated observer is pruned and never called.
///
/// Both methods are called outside the monitor's lock, so they may call back
/// into the monitor (for example to remove themselves). They may be called on
/// any thread: the monitor's utility-QoS timer queue, the thread that called
/// ``MemoryPressureMonitor/notifyMemoryPressure()``, or on Apple platforms the
/// thread that delivered the system event (the main thread for UIKit
/// notifications). They should return promptly.
protocol MemoryPressureObserver: AnyObject, Sendable {
    /// The system is short of memory: release what can be recreated.
    func didReceiveMemoryPressure()

    /// Apple platforms: the app entered the background. Never called on Linux.
    func didEnterBackground()
}
