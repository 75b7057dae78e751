#if Redis
import XCTest
@testable import Stash

extension Cache {
    /// Records the invalidations this cache has applied to its local tiers (not
    /// merely received), so that a test waits for an event, never for a time.
    func recordAppliedInvalidations() -> InvalidationRecorder {
        let recorder = InvalidationRecorder()
        remoteLink?.invalidationObserver = recorder.handler
        return recorder
    }
}
#endif  // Redis
