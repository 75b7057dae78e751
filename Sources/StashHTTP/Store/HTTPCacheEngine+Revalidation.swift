#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import Logging
import Stash

/// Background revalidation (`stale-while-revalidate`): one request per stored response, and waiting
/// for them at shutdown.
extension HTTPCacheEngine {
    /// Starts one background revalidation of `stored` (`stale-while-revalidate`), unless one
    /// (or a foreground fetch) is already under way for `key`.
    func revalidateInBackground(
        key: String, request: HTTPRequest, stored: StoredResponse,
        origin: @escaping @Sendable (HTTPRequest, HTTPCacheBody?) async throws -> (HTTPResponse, HTTPCacheBody)
    ) {
        let gate = FetchGate()
        let started: Bool = state.withLock { state in
            guard state.inFlight[key] == nil else { return false }
            state.inFlight[key] = gate
            return true
        }
        guard started else { return }
        background.start {
            defer {
                self.state.withLock { state in
                    if state.inFlight[key] === gate { state.inFlight[key] = nil }
                }
                gate.open()
            }
            do {
                _ = try await self.validate(request: request, key: key, stored: stored, policy: .useProtocolPolicy, origin: origin)
            } catch {
                self.logger.warning(
                    "a background revalidation failed; the stale response stays stored",
                    metadata: ["key": "\(key)", "error": "\(error)"])
            }
        }
    }

    /// How many calls wait for the origin request under way for `key`: for tests.
    func waiterCount(forKey key: String) -> Int {
        state.withLock { $0.inFlight[key] }?.waiterCount ?? 0
    }

    /// Waits, without a bound, for every background revalidation started so far: for tests (shutdown
    /// uses ``waitForBackgroundRevalidations(timeout:)``).
    func waitForBackgroundRevalidations() async {
        await background.waitUntilIdle()
    }

    /// ``waitForBackgroundRevalidations()`` for at most `timeout`; logs those left running.
    func waitForBackgroundRevalidations(timeout: Duration) async {
        guard !(await background.waitUntilIdle(timeout: timeout, clock: clock)) else { return }
        logger.warning(
            "closing the HTTP cache: background revalidations had not finished (timed out or cancelled); they go on, and what they store after the close reaches memory only, or nothing with a disk tier",
            metadata: ["running": "\(background.count)", "timeout": "\(timeout)"])
    }
}
