#if Hummingbird
import Foundation
import Hummingbird
import Stash
import StashHummingbird
import StashTestSupport
import Testing

/// `StashPersistDriver` against Hummingbird's documented `PersistDriver` contract, one test per
/// rule, on a manual clock (no test waits for time); then in a running app.
@Suite(.timeLimit(.minutes(5))) struct StashPersistDriverTests {
    static let start: Int64 = 1_800_000_000_000_000_000

    /// A driver on memory + disk, both on `clock`.
    static func driver(_ directory: TemporaryDirectory, clock: ManualClock) throws -> StashPersistDriver {
        let memory = MemoryCache<String, JSONRecord>(configuration: .init(countLimit: 1000, clock: clock))
        let disk = try DiskCache(directory: directory.path, codec: .jsonRecord, configuration: .init(clock: clock))
        return StashPersistDriver(cache: try Cache(memory: memory, disk: disk), clock: clock)
    }

    struct Session: Codable, Equatable {
        var user: String
        var visits: Int
    }

    @Test func createThrowsDuplicateWhenTheKeyHoldsALiveValue() async throws {
        try await withTemporaryDirectory { directory in
            let clock = ManualClock(start: Self.start)
            let driver = try Self.driver(directory, clock: clock)
            try await driver.create(key: "k", value: "first", expires: .seconds(10))
            await #expect(throws: PersistError.duplicate) {
                try await driver.create(key: "k", value: "second", expires: nil)
            }
            #expect(try await driver.get(key: "k", as: String.self) == "first")
            clock.advance(by: .seconds(11))
            try await driver.create(key: "k", value: "after expiry", expires: nil)
            #expect(try await driver.get(key: "k", as: String.self) == "after expiry")
        }
    }

    @Test func concurrentCreatesOfOneKeyHaveOneWinner() async throws {
        try await withTemporaryDirectory { directory in
            let driver = try Self.driver(directory, clock: ManualClock(start: Self.start))
            let created = try await withThrowingTaskGroup(of: Int?.self) { group in
                for index in 0..<100 {
                    group.addTask {
                        do {
                            try await driver.create(key: "once", value: index, expires: nil)
                            return index
                        } catch let error as PersistError where error == .duplicate {
                            return nil
                        }
                    }
                }
                var created: [Int] = []
                for try await index in group { if let index { created.append(index) } }
                return created
            }
            #expect(created.count == 1)
            #expect(try await driver.get(key: "once", as: Int.self) == created.first)
        }
    }

    @Test func setWithoutExpiryKeepsTheExistingExpiry() async throws {
        try await withTemporaryDirectory { directory in
            let clock = ManualClock(start: Self.start)
            let driver = try Self.driver(directory, clock: clock)
            try await driver.set(key: "k", value: 1, expires: .seconds(10))
            clock.advance(by: .seconds(4))
            try await driver.set(key: "k", value: 2, expires: nil)
            let kept = try await driver.getWithTTL(key: "k", as: Int.self)
            #expect(kept?.object == 2)
            #expect(kept?.ttl == .seconds(6))
            clock.advance(by: .seconds(7))
            #expect(try await driver.get(key: "k", as: Int.self) == nil)

            // A key without expiry stays without; a new expiry replaces the old one.
            try await driver.set(key: "forever", value: 1, expires: nil)
            try await driver.set(key: "forever", value: 2, expires: nil)
            #expect(try await driver.getWithTTL(key: "forever", as: Int.self)?.ttl == nil)
            try await driver.set(key: "forever", value: 3, expires: .seconds(30))
            #expect(try await driver.getWithTTL(key: "forever", as: Int.self)?.ttl == .seconds(30))
        }
    }

    @Test func getThrowsInvalidConversionOnATypeMismatch() async throws {
        try await withTemporaryDirectory { directory in
            let driver = try Self.driver(directory, clock: ManualClock(start: Self.start))
            try await driver.set(key: "session", value: Session(user: "ada", visits: 3), expires: nil)
            #expect(try await driver.get(key: "session", as: Session.self) == Session(user: "ada", visits: 3))
            await #expect(throws: PersistError.invalidConversion) {
                _ = try await driver.get(key: "session", as: Int.self)
            }
            #expect(try await driver.get(key: "missing", as: Int.self) == nil)

            // From disk (memory dropped it): decoded from its JSON, with the same rules.
            driver.cache.memory?.removeValue(forKey: "session")
            #expect(try await driver.get(key: "session", as: Session.self) == Session(user: "ada", visits: 3))
            driver.cache.memory?.removeValue(forKey: "session")
            await #expect(throws: PersistError.invalidConversion) {
                _ = try await driver.get(key: "session", as: Int.self)
            }
        }
    }

    @Test func getWithTTLReturnsTheTimeLeft() async throws {
        try await withTemporaryDirectory { directory in
            let clock = ManualClock(start: Self.start)
            let driver = try Self.driver(directory, clock: clock)
            try await driver.set(key: "k", value: "v", expires: .seconds(60))
            clock.advance(by: .seconds(15))
            let entry = try await driver.getWithTTL(key: "k", as: String.self)
            #expect(entry?.object == "v")
            #expect(entry?.ttl == .seconds(45))
        }
    }

    @Test func removeDeletesTheKeyFromEveryTier() async throws {
        try await withTemporaryDirectory { directory in
            let driver = try Self.driver(directory, clock: ManualClock(start: Self.start))
            try await driver.set(key: "k", value: "v", expires: nil)
            try await driver.remove(key: "k")
            #expect(try await driver.get(key: "k", as: String.self) == nil)
            #expect(try await driver.cache.disk?.contains("k") == false)
        }
    }

    /// 100 concurrent sets of one key from one task each, in order per key within the process:
    /// the value left is one of them, and every later read agrees.
    @Test func concurrentSetsLeaveOneOfTheValues() async throws {
        try await withTemporaryDirectory { directory in
            let driver = try Self.driver(directory, clock: ManualClock(start: Self.start))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<100 {
                    group.addTask { try await driver.set(key: "k", value: index, expires: index % 2 == 0 ? nil : .seconds(60)) }
                }
                try await group.waitForAll()
            }
            let value = try #require(try await driver.get(key: "k", as: Int.self))
            #expect((0..<100).contains(value))
            driver.cache.memory?.removeValue(forKey: "k")
            #expect(try await driver.get(key: "k", as: Int.self) == value, "the disk tier holds the same value")
        }
    }

    /// One key's writes, made in order while 4 readers read it, are seen in that order: no reader
    /// ever reads an older value after a newer one, and the last write is what every tier keeps.
    @Test func readersNeverSeeAKeysWritesOutOfOrder() async throws {
        try await withTemporaryDirectory { directory in
            let driver = try Self.driver(directory, clock: ManualClock(start: Self.start))
            try await driver.set(key: "k", value: -1, expires: nil)
            let done = LockedValue(false)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        var last = -1
                        while !done.withLock({ $0 }) {
                            let value = try #require(try await driver.get(key: "k", as: Int.self))
                            #expect(value >= last, "read \(value) after \(last)")
                            last = value
                            await Task.yield()
                        }
                    }
                }
                group.addTask {
                    defer { done.withLock { $0 = true } }
                    for index in 0..<100 { try await driver.set(key: "k", value: index, expires: nil) }
                }
                try await group.waitForAll()
            }
            #expect(try await driver.get(key: "k", as: Int.self) == 99)
            driver.cache.memory?.removeValue(forKey: "k")
            #expect(try await driver.get(key: "k", as: Int.self) == 99)
        }
    }

    /// The driver as a running app's `persist` service: a route creates and reads through it over
    /// HTTP on 127.0.0.1, and the app's graceful shutdown closes the driver's own disk tier.
    @Test func aRunningAppUsesTheDriverAndShutsItDown() async throws {
        try await withTemporaryDirectory { directory in
            let persist = try StashPersistDriver(memoryCountLimit: 100, directory: directory.path)
            let router = Router()
            router.put("/counter/:name") { _, context in
                let name = try context.parameters.require("name")
                let count = (try await persist.get(key: name, as: Int.self) ?? 0) + 1
                try await persist.set(key: name, value: count, expires: .seconds(60))
                return "\(count)"
            }
            var app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            app.addServices(persist)
            try await withRunningApp(app) { client in
                for expected in ["1", "2", "3"] {
                    let response = try await client.execute(uri: "/counter/visits", method: .put)
                    #expect(response.status == .ok)
                    #expect(String(buffer: response.body) == expected)
                }
            }
            // The service group shut down: the driver closed its disk tier.
            await #expect(throws: StashError.self) {
                _ = try await persist.cache.disk?.value(forKey: "visits")
            }
        }
    }

    /// A driver on a cache it was given runs as a service too, and leaves that cache open at
    /// shutdown: the cache is its owner's to close.
    @Test func aDriverLeavesACacheItWasGivenOpen() async throws {
        try await withTemporaryDirectory { directory in
            let clock = ManualClock(start: Self.start)
            let persist = try Self.driver(directory, clock: clock)
            let router = Router()
            router.put("/note") { _, _ in
                try await persist.set(key: "note", value: "kept", expires: nil)
                return "ok"
            }
            var app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            app.addServices(persist)
            try await withRunningApp(app) { client in
                let response = try await client.execute(uri: "/note", method: .put)
                #expect(response.status == .ok)
            }
            let onDisk = try await persist.cache.disk?.value(forKey: "note")
            #expect(onDisk != nil, "the disk tier is still open")
            #expect(try await persist.get(key: "note", as: String.self) == "kept")
            await persist.cache.close()
        }
    }
}
#endif  // Hummingbird
