#if Redis
import Foundation
import Stash
import StashRedis

/// `stash-redis-bench hung PORT PID PAUSE_MS ROUNDS`: Redis frozen (SIGSTOP) under a steady load
/// of reads through a `RedisCacheTier` with the default configuration (1 s command timeout, the
/// breaker's defaults), then resumed (SIGCONT). Prints, per round, the longest any call took (a
/// command must not outlive its timeout by more than 10 %) and the time from SIGCONT until the
/// first call that reached Redis again (sharing must resume within 1 s).
func runHungRedisBench(configuration: RedisConfiguration, pid: Int32, pause: Duration, rounds: Int) async throws {
    var configuration = configuration
    configuration.commandTimeout = .seconds(1)
    let client = RedisClient(configuration: configuration)
    let tier = RedisCacheTier(executor: client, codec: .data, configuration: .init(keyPrefix: "hung:"))
    try await tier.setValue(Data([1]), forKey: "k", ttl: nil)
    let clock = ContinuousClock()
    for round in 1...rounds {
        let resumedAt = LockedValue<ContinuousClock.Instant?>(nil)
        let stop = LockedValue(false)
        // Four callers, each reading in a loop, as a server's requests would.
        let results = await withTaskGroup(of: (longest: Duration, firstAfterResume: Duration?).self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var longest = Duration.zero
                    var firstAfterResume: Duration?
                    while !stop.withLock({ $0 }) {
                        let start = clock.now
                        let reached = (try? await tier.entry(forKey: "k")) != nil
                        let end = clock.now
                        longest = max(longest, end - start)
                        if reached, firstAfterResume == nil, let resumed = resumedAt.withLock({ $0 }), start >= resumed {
                            firstAfterResume = end - resumed
                        }
                        try? await Task.sleep(for: .milliseconds(5))
                    }
                    return (longest, firstAfterResume)
                }
            }
            try? await Task.sleep(for: .milliseconds(300))
            kill(pid, SIGSTOP)
            try? await Task.sleep(for: pause)
            kill(pid, SIGCONT)
            resumedAt.withLock { $0 = clock.now }
            try? await Task.sleep(for: .seconds(3))
            stop.withLock { $0 = true }
            var all: [(longest: Duration, firstAfterResume: Duration?)] = []
            for await result in group { all.append(result) }
            return all
        }
        let longest = results.map(\.longest).max() ?? .zero
        let resumed = results.compactMap(\.firstAfterResume).min()
        func ms(_ duration: Duration?) -> String {
            guard let duration else { return "never" }
            return String(format: "%.0f", Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15)
        }
        print("round \(round): longest_call_ms=\(ms(longest)) shared_again_after_ms=\(ms(resumed))")
    }
    await client.close()
}
#endif  // Redis
