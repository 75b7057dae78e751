#if canImport(Darwin)
import Dispatch
import Foundation
#if canImport(UIKit) && !os(watchOS)
import UIKit
#endif

/// Apple platforms' memory events, forwarded to a monitor's observers:
///
/// - the dispatch memory-pressure source, `warning` and `critical`, on a
///   utility-QoS queue → ``MemoryPressureObserver/didReceiveMemoryPressure()``;
/// - with UIKit (not on watchOS, which has no `UIApplication`):
///   `UIApplication.didReceiveMemoryWarningNotification` →
///   ``MemoryPressureObserver/didReceiveMemoryPressure()`` and
///   `UIApplication.didEnterBackgroundNotification` →
///   ``MemoryPressureObserver/didEnterBackground()``, on the posting (main) thread.
///
/// On iOS one low-memory episode may arrive through both the dispatch source
/// and the UIKit warning; observers must tolerate being told twice.
///
/// Holds the monitor weakly. Subscribes in `init`, unsubscribes in `deinit`.
final class DarwinMemoryEvents: @unchecked Sendable {
    // @unchecked Sendable: both stored properties are `let`s set in init and
    // used again only in deinit; the dispatch source and the notification
    // tokens are thread-safe objects that exist to be cancelled from any thread.
    private let pressureSource: any DispatchSourceMemoryPressure
    private let notificationTokens: [any NSObjectProtocol]

    /// Subscribes to the events. Does not block.
    init(monitor: MemoryPressureMonitor) {
        let source = DispatchSource.makeMemoryPressureSource(
            eventMask: [.warning, .critical], queue: MemoryPressureMonitor.pollQueue)
        source.setEventHandler { [weak monitor] in
            monitor?.notifyMemoryPressure()
        }
        source.resume()
        pressureSource = source

        var tokens: [any NSObjectProtocol] = []
        #if canImport(UIKit) && !os(watchOS)
        let center = NotificationCenter.default
        tokens.append(
            center.addObserver(
                forName: UIApplication.didReceiveMemoryWarningNotification, object: nil, queue: nil
            ) { [weak monitor] _ in
                monitor?.notifyMemoryPressure()
            })
        tokens.append(
            center.addObserver(
                forName: UIApplication.didEnterBackgroundNotification, object: nil, queue: nil
            ) { [weak monitor] _ in
                monitor?.notifyDidEnterBackground()
            })
        #endif
        notificationTokens = tokens
    }

    deinit {
        pressureSource.cancel()
        for token in notificationTokens {
            NotificationCenter.default.removeObserver(token)
        }
    }
}
#endif
