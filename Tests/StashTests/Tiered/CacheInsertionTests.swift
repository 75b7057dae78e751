import StashTestSupport
import Testing
@testable import Stash

/// `Cache.insertValue(_:forKey:ttl:)` without a remote tier: atomic within the process.
@Suite(.timeLimit(.minutes(5))) struct CacheInsertionTests {
    @Test func anInsertionStoresOnlyWhereNoTierHoldsTheKey() async throws {
        try await withTemporaryDirectory { directory in
            let cache = try Cache<String>(directory: directory.path, codec: .string)
            #expect(try await cache.insertValue("first", forKey: "k"))
            #expect(try await !cache.insertValue("second", forKey: "k"))
            #expect(try await cache.value(forKey: "k") == "first")

            // Held by disk only (memory dropped it): still taken.
            cache.memory?.removeValue(forKey: "k")
            #expect(try await !cache.insertValue("third", forKey: "k"))
            #expect(try await cache.value(forKey: "k") == "first")

            // Removed, or expired: free again.
            try await cache.removeValue(forKey: "k")
            #expect(try await cache.insertValue("fourth", forKey: "k", ttl: .seconds(60)))
            #expect(try await cache.value(forKey: "k") == "fourth")
        }
    }

    @Test func anExpiredValueDoesNotHoldTheKey() async throws {
        try await withTemporaryDirectory { directory in
            let clock = ManualClock(start: 1_700_000_000_000_000_000)
            let memory = makeMemoryCache(String.self, String.self, clock: clock)
            let cache = try Cache(memory: memory, disk: try makeDiskCache(directory, codec: .string, clock: clock))
            #expect(try await cache.insertValue("short", forKey: "k", ttl: .seconds(1)))
            clock.advance(by: .seconds(2))
            #expect(try await cache.insertValue("again", forKey: "k"))
            #expect(try await cache.value(forKey: "k") == "again")
        }
    }

    /// 100 concurrent insertions of one key: exactly one wins, and its value is the one kept.
    @Test(arguments: [false, true])
    func concurrentInsertionsOfOneKeyHaveOneWinner(disk: Bool) async throws {
        try await withTemporaryDirectory { directory in
            let cache = disk
                ? try Cache<String>(directory: directory.path, codec: .string)
                : try Cache<String>(memory: MemoryCache(), disk: nil)
            let winners = try await withThrowingTaskGroup(of: String?.self) { group in
                for index in 0..<100 {
                    group.addTask { try await cache.insertValue("v\(index)", forKey: "contended") ? "v\(index)" : nil }
                }
                var winners: [String] = []
                for try await winner in group { if let winner { winners.append(winner) } }
                return winners
            }
            #expect(winners.count == 1)
            #expect(try await cache.value(forKey: "contended") == winners.first)
        }
    }
}
