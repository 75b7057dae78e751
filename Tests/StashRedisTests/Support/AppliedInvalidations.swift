#if Redis
import StashTestSupport
@testable import Stash

extension Cache {
    /// Records the invalidations this cache has applied to its local tiers (not
    /// merely received), so that a test waits for an event, never for a time.
    func recordAppliedInvalidations() -> InvalidationRecorder {
        let recorder = InvalidationRecorder()
        core.remoteLink?.invalidationObserver = recorder.handler
        return recorder
    }

    /// Waits until no key is marked stale, bounded by ``defaultWaitTimeout``. Whenever no repair
    /// is under way it starts one, as the cache's next successful call would: a repair that failed
    /// (a command that timed out on a loaded machine) waits for such a call, and a test that makes
    /// none would otherwise wait out the bound. `breakerClock`, when given, is moved a second on
    /// each check, so that the tier's breaker lets a probe through.
    func waitUntilRepaired(advancing breakerClock: ManualClock? = nil) async throws {
        try await yield(until: {
            guard core.remoteLink?.hasStaleKeys == true else { return true }
            breakerClock?.advance(by: .seconds(1))
            core.remoteLink?.repairStaleKeys()
            return false
        })
    }
}
#endif  // Redis
