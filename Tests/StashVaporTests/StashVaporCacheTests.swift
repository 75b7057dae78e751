#if Vapor
import Foundation
import NIOCore
import Stash
import StashTestSupport
import StashVapor
import Testing
import Vapor

/// `StashVaporCache` against Vapor's documented `Cache` contract, one test per rule, on a manual
/// clock (no test waits for time); then as a running app's `app.cache`, through Vapor's own
/// `Cache` API (futures and async), and its shutdown.
@Suite(.timeLimit(.minutes(5))) struct StashVaporCacheTests {
    static let start: Int64 = 1_800_000_000_000_000_000

    /// A driver on memory + disk, both on `clock`, its futures on `eventLoop`.
    static func driver(_ directory: TemporaryDirectory, clock: ManualClock) throws -> StashVaporCache {
        let memory = MemoryCache<String, JSONRecord>(configuration: .init(countLimit: 1000, clock: clock))
        let disk = try DiskCache(directory: directory.path, codec: .jsonRecord, configuration: .init(clock: clock))
        return StashVaporCache(cache: try Stash.Cache(memory: memory, disk: disk), on: MultiThreadedEventLoopGroup.singleton.next(), clock: clock)
    }

    struct Profile: Codable, Equatable, Sendable {
        var name: String
        var visits: Int
    }

    @Test func getReturnsNilForAMissingKeyAndTheValueSetOtherwise() async throws {
        try await withTemporaryDirectory { directory in
            let driver = try Self.driver(directory, clock: ManualClock(start: Self.start))
            let cache: any Vapor.Cache = driver  // Vapor's API: futures, and its async wrappers
            #expect(try await cache.get("missing", as: String.self) == nil)
            try await cache.set("profile", to: Profile(name: "ada", visits: 3))
            #expect(try await cache.get("profile", as: Profile.self) == Profile(name: "ada", visits: 3))
            #expect(try await cache.get("profile", as: Profile.self).get() == Profile(name: "ada", visits: 3))

            // From disk (memory dropped it): decoded from its JSON.
            driver.cache.memory?.removeValue(forKey: "profile")
            #expect(try await cache.get("profile", as: Profile.self) == Profile(name: "ada", visits: 3))
        }
    }

    /// Vapor's protocol has a default `set(_:to:expiresIn:)` that drops the expiry: the driver
    /// implements it, in every tier.
    @Test func setWithExpiresInExpiresTheValueInEveryTier() async throws {
        try await withTemporaryDirectory { directory in
            let clock = ManualClock(start: Self.start)
            let driver = try Self.driver(directory, clock: clock)
            let cache: any Vapor.Cache = driver
            try await cache.set("token", to: "abc", expiresIn: .seconds(30))
            clock.advance(by: .seconds(29))
            #expect(try await cache.get("token", as: String.self) == "abc")
            driver.cache.memory?.removeValue(forKey: "token")
            #expect(try await cache.get("token", as: String.self) == "abc")  // the disk copy has it too
            clock.advance(by: .seconds(2))
            #expect(try await cache.get("token", as: String.self) == nil)
            #expect(try await driver.cache.disk?.value(forKey: "token") == nil)
        }
    }

    /// `set(_:to:)` replaces the value and its expiry: the new value has none.
    @Test func setWithoutExpiryReplacesTheValueAndItsExpiry() async throws {
        try await withTemporaryDirectory { directory in
            let clock = ManualClock(start: Self.start)
            let cache: any Vapor.Cache = try Self.driver(directory, clock: clock)
            try await cache.set("k", to: 1, expiresIn: .minutes(1))
            try await cache.set("k", to: 2)
            clock.advance(by: .seconds(3600))
            #expect(try await cache.get("k", as: Int.self) == 2)
        }
    }

    @Test func settingNilOrAnExpiryNotInTheFutureRemovesTheKey() async throws {
        try await withTemporaryDirectory { directory in
            let driver = try Self.driver(directory, clock: ManualClock(start: Self.start))
            let cache: any Vapor.Cache = driver
            for remove in [
                { try await cache.set("k", to: String?.none) },
                { try await cache.delete("k") },
                { try await cache.set("k", to: "v", expiresIn: .seconds(0)) },
                { try await cache.set("k", to: "v", expiresIn: .seconds(-5)) },
            ] as [() async throws -> Void] {
                try await cache.set("k", to: "v")
                try await remove()
                #expect(try await cache.get("k", as: String.self) == nil)
                #expect(try await driver.cache.disk?.contains("k") == false)
            }
        }
    }

    @Test func getOfAnotherTypeFailsWithDecodingFailed() async throws {
        try await withTemporaryDirectory { directory in
            let driver = try Self.driver(directory, clock: ManualClock(start: Self.start))
            let cache: any Vapor.Cache = driver
            try await cache.set("profile", to: Profile(name: "ada", visits: 3))
            for _ in 0..<2 {  // from memory, then from disk
                let error = await #expect(throws: StashError.self) {
                    _ = try await cache.get("profile", as: Int.self)
                }
                #expect(error?.code == .decodingFailed)
                driver.cache.memory?.removeValue(forKey: "profile")
            }
        }
    }

    /// 100 concurrent sets of one key, half with an expiry: the value left is one of them, every
    /// later read agrees, and the memory and disk tiers hold the same record.
    @Test func concurrentSetsLeaveOneOfTheValuesInEveryTier() async throws {
        try await withTemporaryDirectory { directory in
            let driver = try Self.driver(directory, clock: ManualClock(start: Self.start))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<100 {
                    group.addTask { try await driver.set("k", to: index, expiresIn: index % 2 == 0 ? nil : .minutes(1)) }
                }
                try await group.waitForAll()
            }
            let value = try #require(try await driver.get("k", as: Int.self))
            #expect((0..<100).contains(value))
            driver.cache.memory?.removeValue(forKey: "k")
            #expect(try await driver.get("k", as: Int.self) == value)
        }
    }

    /// `app.caches.use(.stash(cache))` in a running app: routes use `req.cache` over HTTP on
    /// 127.0.0.1, and the app's shutdown closes the cache's disk tier (its lifecycle handler).
    @Test func aRunningAppUsesTheDriverAndClosesItsDiskTierOnShutdown() async throws {
        try await withTemporaryDirectory { directory in
            let cache = try Stash.Cache<JSONRecord>(
                memory: MemoryCache(configuration: .init(countLimit: 100)),
                disk: DiskCache(directory: directory.path, codec: .jsonRecord))
            try await withRunningApp(configure: { app in
                app.caches.use(.stash(cache))
                app.put("counter", ":name") { request async throws -> String in
                    let name = try request.parameters.require("name")
                    let count = (try await request.cache.get(name, as: Int.self) ?? 0) + 1
                    try await request.cache.set(name, to: count, expiresIn: .minutes(1))
                    return "\(count)"
                }
                #expect(app.cache is StashVaporCache)
            }) { running in
                for expected in ["1", "2", "3"] {
                    let answer = try await running.send(.PUT, "/counter/visits")
                    #expect(answer.status == .ok)
                    #expect(answer.body == expected)
                }
                #expect(try await running.app.caches.stash.get("visits", as: Int.self) == 3)
            }
            // The app shut down: its lifecycle handler closed the disk tier.
            await #expect(throws: StashError.self) {
                _ = try await cache.disk?.value(forKey: "visits")
            }
        }
    }

    /// `.stash(countLimit:)` keeps its limit, where Vapor's `.memory` keeps everything.
    @Test func theBoundedProviderKeepsItsCountLimit() async throws {
        try await withRunningApp(configure: { app in app.caches.use(.stash(countLimit: 10)) }) { running in
            let cache = running.app.caches.stash
            for index in 0..<100 { try await cache.set("k\(index)", to: index, expiresIn: nil) }
            #expect(cache.cache.memory?.count == 10)
            #expect(try await cache.get("k99", as: Int.self) == 99)
        }
    }
}
#endif  // Vapor
