import ArgumentParser
import Stash

struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A short tour of Stash's caches, printing what happens."
    )

    func run() throws {
        memoryTour()
    }

    private func memoryTour() {
        print("== MemoryCache: strict limits, LRU eviction, expiry")
        let clock = ManualClock()
        let cache = MemoryCache<String, String>(
            name: "demo", countLimit: 3, costLimit: 100, policy: .lru, clock: clock)
        cache.onEvict = { key, value, reason in
            print("   evicted \(key)=\(value) (\(reason))")
        }
        for (key, value) in [("a", "apple"), ("b", "banana"), ("c", "cherry")] {
            cache.setValue(value, forKey: key, cost: value.utf8.count)
            print(" set \(key)=\(value) cost \(value.utf8.count)")
        }
        print(" get a -> \(cache.value(forKey: "a") ?? "nil")   (a is now the most recent)")
        print(" set d=date: the count limit is 3, so the least recently used entry goes")
        cache.setValue("date", forKey: "d", cost: 4)
        print(" keys in eviction order: \(cache.keys)")
        print(" set e with a cost of 101: more than the cost limit of 100, so it is not stored")
        cache.setValue(String(repeating: "e", count: 101), forKey: "e", cost: 101)
        print(" set f=fig with a 10-second time to live, then 11 seconds pass")
        cache.setValue("fig", forKey: "f", ttl: .seconds(10))
        clock.advance(by: .seconds(11))
        print(" get f -> \(cache.value(forKey: "f") ?? "nil")")
        print(" count \(cache.count) (limit \(cache.countLimit)), total cost \(cache.totalCost) (limit \(cache.costLimit))")
        let stats = cache.statistics
        print(" statistics: \(stats.hits) hits, \(stats.misses) misses, \(stats.evictions) evictions")
    }
}
