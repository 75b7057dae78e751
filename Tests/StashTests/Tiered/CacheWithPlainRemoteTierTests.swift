import Foundation
import StashTestSupport
import Testing
@testable import Stash

/// A `Cache` over a remote tier that has only `RemoteCacheTier`'s four requirements (a store
/// with no pub/sub, no locks and no multi-key read, as Memcached or DynamoDB would be), and over
/// one that adds batch reads and writes: the cache uses each capability the tier has and does
/// without the others. The Redis tier, which has them all, is tested against real servers in StashRedisTests.
@Suite(.timeLimit(.minutes(5))) struct CacheWithPlainRemoteTierTests {
    /// A time to live no test of this suite outlives: the stores here expire entries on the real
    /// clock, and under the address sanitizer on a loaded 2-core machine a test has taken more
    /// than a minute between storing an entry and reading it back.
    private static let outlivesTheSuite: Duration = .seconds(3_600)

    @Test func readsWritesAndRemovalsGoThroughATierWithOnlyTheCoreRequirements() async throws {
        let store = DictionaryStore()
        let tier = PlainTier(store: store)
        let cache = try Cache<String>(memory: MemoryCache(), disk: nil, remote: tier)
        // Nothing to subscribe to: returns at once.
        await cache.waitUntilReceivingInvalidations()

        try await cache.setValue("one", forKey: "a", ttl: Self.outlivesTheSuite)
        #expect(store.value(forKey: "a") == "one")

        // Written by another instance straight into the store: a remote hit, promoted.
        store.set("two", forKey: "b", ttl: Self.outlivesTheSuite)
        #expect(try await cache.value(forKey: "b") == "two")
        #expect(cache.memory?.value(forKey: "b") == "two")

        #expect(try await cache.removeValue(forKey: "a"))
        #expect(store.value(forKey: "a") == nil)
        try await cache.removeAll()
        #expect(store.count == 0)
        await cache.close()
    }

    @Test func aFleetLockIsIgnoredWhenTheTierHasNoLocks() async throws {
        let tier = PlainTier(store: DictionaryStore())
        let cache = try Cache<String>(memory: MemoryCache(), disk: nil, remote: tier)
        let loads = LockedValue(0)
        let options = LoadOptions(fleetLockTTL: .seconds(10))
        let value = try await cache.value(forKey: "k", options: options) { _ in
            loads.withLock { $0 += 1 }
            return "loaded"
        }
        #expect(value == "loaded")
        #expect(loads.withLock { $0 } == 1)
        #expect(await cache.core.remoteLink?.acquireLock(forKey: "k", ttl: .seconds(1)).isUnavailable == true)
        await cache.close()
    }

    @Test func aBulkReadAsksATierWithoutBatchesOneKeyAtATime() async throws {
        let store = DictionaryStore()
        for key in ["a", "b", "c"] { store.set("remote-\(key)", forKey: key, ttl: nil) }
        let tier = PlainTier(store: store)
        let cache = try Cache<String>(memory: MemoryCache(), disk: nil, remote: tier)
        try await cache.setValue("local-d", forKey: "d")
        let values = try await cache.values(forKeys: ["a", "b", "c", "d", "e", "a"]) { keys in
            Dictionary(uniqueKeysWithValues: keys.map { ($0, "loaded-\($0)") })
        }
        #expect(values == ["a": "remote-a", "b": "remote-b", "c": "remote-c", "d": "local-d", "e": "loaded-e"])
        // Memory answered d; a, b, c and e were each read once.
        #expect(store.singleReads == 4)
        #expect(store.batchReads == 0)
        await cache.close()
    }

    @Test func aBulkReadAsksABatchReadingTierOnceForEveryKeyTheLocalTiersMiss() async throws {
        try await withTemporaryDirectory { directory in
            let store = DictionaryStore()
            for key in ["a", "b", "c"] { store.set("remote-\(key)", forKey: key, ttl: Self.outlivesTheSuite) }
            let tier = BatchTier(store: store)
            let cache = try Cache<String>(
                memory: MemoryCache(), disk: try makeDiskCache(directory, codec: .string), remote: tier)
            try await cache.setValue("local-d", forKey: "d")
            cache.memory?.removeValue(forKey: "d")  // on disk only
            let values = try await cache.values(forKeys: ["a", "b", "c", "d", "e"]) { keys in
                Dictionary(uniqueKeysWithValues: keys.map { ($0, "loaded-\($0)") })
            }
            #expect(values == ["a": "remote-a", "b": "remote-b", "c": "remote-c", "d": "local-d", "e": "loaded-e"])
            #expect(store.batchReads == 1)
            #expect(store.batchedKeys == ["a", "b", "c", "e"])
            #expect(store.singleReads == 0)
            // The remote hits were promoted with the shared copy's time to live: read locally now.
            #expect(cache.memory?.value(forKey: "b") == "remote-b")
            #expect(try await cache.disk?.value(forKey: "c") == "remote-c")
            await cache.close()
        }
    }

    /// More remote hits than one turn of the disk queue takes: every one is promoted into both
    /// local tiers with the shared copy's time to live, and read locally afterwards.
    @Test func aBulkReadPromotesEveryRemoteHitInTurnsOfTheDiskQueue() async throws {
        try await withTemporaryDirectory { directory in
            let store = DictionaryStore()
            let keys = (0..<(CacheCore<String>.bulkDiskChunk * 2 + 3)).map { "k\($0)" }
            for key in keys { store.set("remote-\(key)", forKey: key, ttl: Self.outlivesTheSuite) }
            let cache = try Cache<String>(
                memory: MemoryCache(), disk: try makeDiskCache(directory, codec: .string), remote: BatchTier(store: store))
            let values = try await cache.values(forKeys: keys) { _ in [:] }
            #expect(values.count == keys.count)
            for key in keys {
                #expect(cache.memory?.value(forKey: key) == "remote-\(key)")
                #expect(try await cache.disk?.value(forKey: key) == "remote-\(key)")
            }
            #expect(store.batchReads == 1)
            await cache.close()
        }
    }

    @Test func aFailedBatchReadIsAMissForEveryKeyAndTheLoaderRuns() async throws {
        let store = DictionaryStore()
        store.set("remote-a", forKey: "a", ttl: nil)
        store.failing = true
        let cache = try Cache<String>(memory: MemoryCache(), disk: nil, remote: BatchTier(store: store))
        let values = try await cache.values(forKeys: ["a", "b"]) { keys in
            Dictionary(uniqueKeysWithValues: keys.map { ($0, "loaded-\($0)") })
        }
        #expect(values == ["a": "loaded-a", "b": "loaded-b"])
        await cache.close()
    }

    /// A store that restarts with older data, as Redis reloading its append-only file: the
    /// subscription drops, a write fails (its key is marked stale), the store answers again and
    /// a newer write lands, then the tier empties the restarted store and the subscription's
    /// return says that everything may have changed. The write that landed before the emptying
    /// is kept locally and served; the store ends without an older copy.
    @Test func aWriteThatLandsWhileTheSubscriptionIsLostSurvivesTheEmptyingOfARestartedStore() async throws {
        let store = DictionaryStore()
        let cache = try Cache<String>(memory: MemoryCache(), disk: nil, remote: PlainTier(store: store))
        let appliedAll = LockedValue(false)
        cache.core.remoteLink?.invalidationObserver = { if $0 == .all { appliedAll.withLock { $0 = true } } }
        try await cache.setValue("v1", forKey: "k")
        try await cache.setValue("other", forKey: "j")

        cache.core.receive(.subscriptionLost)
        store.failing = true
        try await cache.setValue("v2", forKey: "k")  // not sent: k is stale
        store.failing = false
        try await cache.setValue("v3", forKey: "k")  // lands on the restarted store
        store.removeAllBypassingFailures()  // the tier empties the restarted store
        cache.core.receive(.all)
        try await yield(until: { appliedAll.withLock { $0 } && cache.core.remoteLink?.hasStaleKeys == false })

        #expect(try await cache.value(forKey: "k") == "v3")
        #expect(store.value(forKey: "k") == nil, "no older copy in the store")
        #expect(try await cache.value(forKey: "j") == nil, "an untouched key is dropped with the rest")
        await cache.close()
    }

    // MARK: - Writes of many keys

    /// More keys than one turn of the disk queue takes: every one in both local tiers, and in the
    /// store through one batch write.
    @Test func setValuesWritesEveryTierAndSendsOneBatchToABatchWritingTier() async throws {
        try await withTemporaryDirectory { directory in
            let store = DictionaryStore()
            let cache = try Cache<String>(
                memory: MemoryCache(), disk: try makeDiskCache(directory, codec: .string),
                remote: BatchTier(store: store))
            let values = Dictionary(uniqueKeysWithValues: (0..<(CacheCore<String>.bulkDiskChunk * 2 + 3)).map { ("k\($0)", "v\($0)") })
            try await cache.setValues(values, ttl: Self.outlivesTheSuite)
            #expect(store.batchWrites == 1)
            #expect(store.singleWrites == 0)
            for (key, value) in values {
                #expect(store.value(forKey: key) == value)
                #expect(cache.memory?.value(forKey: key) == value)
                #expect(try await cache.disk?.value(forKey: key) == value)
            }
            await cache.close()
        }
    }

    @Test func setValuesSendsOneKeyAtATimeToATierWithoutBatchWrites() async throws {
        let store = DictionaryStore()
        let cache = try Cache<String>(memory: MemoryCache(), disk: nil, remote: PlainTier(store: store))
        try await cache.setValues(["a": "1", "b": "2", "c": "3"])
        #expect(store.singleWrites == 3)
        #expect(["a", "b", "c"].map(store.value(forKey:)) == ["1", "2", "3"])
        await cache.close()
    }

    /// A value over the disk's size limit fails alone: the others are written and shared, the
    /// refused key keeps its old disk value and leaves memory, and the error is thrown at the end.
    @Test func setValuesRefusesAValueOverTheSizeLimitAloneAndWritesTheRest() async throws {
        try await withTemporaryDirectory { directory in
            let store = DictionaryStore()
            let cache = try Cache<String>(
                memory: MemoryCache(), disk: try makeDiskCache(directory, codec: .string, sizeLimit: 1_000),
                remote: BatchTier(store: store))
            try await cache.setValue("old", forKey: "big")
            let big = String(repeating: "x", count: 2_000)
            await #expect(throws: StashError.self) {
                try await cache.setValues(["a": "1", "big": big, "b": "2"])
            }
            #expect(try await cache.disk?.value(forKey: "a") == "1")
            #expect(try await cache.disk?.value(forKey: "b") == "2")
            #expect(try await cache.disk?.value(forKey: "big") == "old")
            #expect(cache.memory?.value(forKey: "big") == nil)
            #expect(store.value(forKey: "a") == "1" && store.value(forKey: "b") == "2")
            #expect(store.value(forKey: "big") == "old", "the refused value is not shared")
            await cache.close()
        }
    }

    @Test func setValuesRefusesAnEmptyKeyBeforeWritingAnything() async throws {
        let store = DictionaryStore()
        let cache = try Cache<String>(memory: MemoryCache(), disk: nil, remote: BatchTier(store: store))
        await #expect(throws: StashError.self) { try await cache.setValues(["a": "1", "": "2"]) }
        #expect(cache.memory?.value(forKey: "a") == nil)
        #expect(store.count == 0)
        await cache.close()
    }

    /// A failed batch leaves every value in the local tiers and marks every key stale: none is
    /// read from the store, and each is removed there once it answers again.
    @Test func aFailedBatchWriteMarksEveryKeyStaleAndRepairsThemOnceTheStoreAnswers() async throws {
        let store = DictionaryStore()
        store.set("old-a", forKey: "a", ttl: nil)
        store.set("old-b", forKey: "b", ttl: nil)
        let cache = try Cache<String>(memory: MemoryCache(), disk: nil, remote: BatchTier(store: store))
        store.failing = true
        try await cache.setValues(["a": "new-a", "b": "new-b"])
        #expect(cache.core.remoteLink?.hasStaleKeys == true)
        #expect(try await cache.value(forKey: "a") == "new-a")
        store.failing = false
        try await cache.setValue("other", forKey: "c")  // a success starts the repair
        try await yield(until: { cache.core.remoteLink?.hasStaleKeys == false })
        #expect(store.value(forKey: "a") == nil && store.value(forKey: "b") == nil, "the old shared copies are gone")
        await cache.close()
    }

    /// What a bulk load returned reaches the store in one batch write, in the background.
    @Test func aBulkLoadSharesWhatItLoadedInOneBatch() async throws {
        let store = DictionaryStore()
        let cache = try Cache<String>(memory: MemoryCache(), disk: nil, remote: BatchTier(store: store))
        let keys = (0..<10).map { "k\($0)" }
        let values = try await cache.values(forKeys: keys) { keys in
            Dictionary(uniqueKeysWithValues: keys.map { ($0, "loaded-\($0)") })
        }
        #expect(values.count == keys.count)
        try await yield(until: { store.count == keys.count })
        #expect(store.batchWrites == 1)
        #expect(store.singleWrites == 0)
        #expect(store.value(forKey: "k3") == "loaded-k3")
        await cache.close()
    }

    /// A bulk load larger than the room left for background sends: what fits is sent, the rest is
    /// kept locally only, its keys marked stale (and repaired: removed from the store).
    @Test func aBulkLoadPastTheSendLimitSendsWhatFitsAndMarksTheRestStale() async throws {
        let store = DictionaryStore()
        let cache = try Cache<String>(memory: MemoryCache(), disk: nil, remote: BatchTier(store: store))
        let link = try #require(cache.core.remoteLink)
        link.maximumPendingSends = 3
        let keys = (0..<5).map { "k\($0)" }
        let values = try await cache.values(forKeys: keys) { keys in
            Dictionary(uniqueKeysWithValues: keys.map { ($0, "loaded-\($0)") })
        }
        #expect(values.count == 5)
        try await yield(until: { link.pendingSendCount == 0 && !link.hasStaleKeys })
        #expect(store.count == 3)
        for key in keys { #expect(cache.memory?.value(forKey: key) == "loaded-\(key)") }
        await cache.close()
    }

    /// Batches and single writes of overlapping keys from four tasks at once (seeded): every call
    /// returns, and each key ends the same in memory, on disk and in the store, so each key's
    /// changes reached the store in their local order.
    @Test(arguments: [1, 2] as [UInt64])
    func batchesAndSingleWritesUnderConcurrencyLeaveEveryTierAgreeing(seed: UInt64) async throws {
        try await withTemporaryDirectory { directory in
            let store = DictionaryStore()
            let cache = try Cache<String>(
                memory: MemoryCache(), disk: try makeDiskCache(directory, codec: .string),
                remote: BatchTier(store: store))
            let keys = (0..<12).map { "k\($0)" }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<4 {
                    group.addTask {
                        var random = SeededGenerator(seed: seed &* 31 &+ UInt64(task))
                        for round in 0..<25 {
                            let value = "t\(task)-r\(round)"
                            if Bool.random(using: &random) {
                                let chosen = keys.filter { _ in Bool.random(using: &random) }
                                try await cache.setValues(Dictionary(uniqueKeysWithValues: chosen.map { ($0, value) }))
                            } else {
                                try await cache.setValue(value, forKey: keys.randomElement(using: &random)!)
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            for key in keys {
                let local = cache.memory?.value(forKey: key)
                #expect(local == (try await cache.disk?.value(forKey: key)))
                #expect(local == store.value(forKey: key), "\(key)")
            }
            #expect(cache.core.remoteLink?.order.keysInFlight.isEmpty == true)
            await cache.close()
        }
    }

    /// Two batches that share two keys and took their tickets in opposite orders: neither waits
    /// for the other forever, and each key ends as its later change left it.
    @Test func twoBatchesWhoseTicketsCrossBothLandInEachKeysOrder() async throws {
        let store = DictionaryStore()
        let cache = try Cache<String>(memory: MemoryCache(), disk: nil, remote: BatchTier(store: store))
        let link = try #require(cache.core.remoteLink)
        let firstA = link.order.enqueue("a"), firstB = link.order.enqueue("b")
        let secondA = link.order.enqueue("a"), secondB = link.order.enqueue("b")
        // One batch holds a's first ticket and b's second; the other, b's first and a's second.
        async let one: Void = link.sendValues([(firstA, "one-a"), (secondB, "one-b")], ttl: nil)
        async let two: Void = link.sendValues([(firstB, "two-b"), (secondA, "two-a")], ttl: nil)
        _ = await (one, two)
        #expect(store.value(forKey: "a") == "two-a")
        #expect(store.value(forKey: "b") == "one-b")
        #expect(link.order.keysInFlight.isEmpty)
        await cache.close()
    }
}

// MARK: - Tiers over an in-process store

/// A key-value store with expiry, in the process: what the test tiers keep their entries in.
private final class DictionaryStore: Sendable {
    private struct State {
        var entries: [String: (value: String, expires: ContinuousClock.Instant?)] = [:]
        var singleReads = 0
        var batchReads = 0
        var batchedKeys: [String] = []
        var singleWrites = 0
        var batchWrites = 0
        var failing = false
    }

    private let state = LockedValue(State())

    var singleReads: Int { state.withLock { $0.singleReads } }
    var batchReads: Int { state.withLock { $0.batchReads } }
    var batchedKeys: [String] { state.withLock { $0.batchedKeys } }
    var singleWrites: Int { state.withLock { $0.singleWrites } }
    var batchWrites: Int { state.withLock { $0.batchWrites } }
    var count: Int { state.withLock { $0.entries.count } }
    var failing: Bool {
        get { state.withLock { $0.failing } }
        set { state.withLock { $0.failing = newValue } }
    }

    func set(_ value: String, forKey key: String, ttl: Duration?) {
        state.withLock { $0.entries[key] = (value, ttl.map { ContinuousClock.now + $0 }) }
    }

    /// Stores `values`, counting one write (or one batch), unless the store is failing.
    func write(_ values: [(key: String, value: String)], ttl: Duration?, batch: Bool) throws {
        try state.withLock { state in
            if state.failing { throw CocoaError(.fileWriteUnknown) }
            if batch { state.batchWrites += 1 } else { state.singleWrites += values.count }
            for (key, value) in values { state.entries[key] = (value, ttl.map { ContinuousClock.now + $0 }) }
        }
    }

    func value(forKey key: String) -> String? {
        state.withLock { $0.entries[key]?.value }
    }

    func read(_ keys: [String], batch: Bool) throws -> [RemoteCacheEntry<String>?] {
        try state.withLock { state in
            if state.failing { throw CocoaError(.fileReadUnknown) }
            if batch {
                state.batchReads += 1
                state.batchedKeys += keys
            } else {
                state.singleReads += keys.count
            }
            let now = ContinuousClock.now
            return keys.map { key in
                guard let stored = state.entries[key] else { return nil }
                if let expires = stored.expires {
                    guard expires > now else { return nil }
                    return RemoteCacheEntry(value: stored.value, ttl: expires - now)
                }
                return RemoteCacheEntry(value: stored.value, ttl: nil)
            }
        }
    }

    func remove(_ key: String) throws -> Bool {
        try state.withLock { state in
            if state.failing { throw CocoaError(.fileWriteUnknown) }
            return state.entries.removeValue(forKey: key) != nil
        }
    }

    /// Empties the store whether or not it is failing: what a tier does to a restarted store.
    func removeAllBypassingFailures() {
        state.withLock { $0.entries.removeAll() }
    }

    func removeAll() throws {
        try state.withLock { state in
            if state.failing { throw CocoaError(.fileWriteUnknown) }
            state.entries.removeAll()
        }
    }
}

/// Only the four requirements of `RemoteCacheTier`.
private struct PlainTier: RemoteCacheTier {
    let store: DictionaryStore

    func entry(forKey key: String) async throws -> RemoteCacheEntry<String>? {
        try store.read([key], batch: false)[0]
    }

    func setValue(_ value: String, forKey key: String, ttl: Duration?) async throws {
        try store.write([(key, value)], ttl: ttl, batch: false)
    }

    func removeValue(forKey key: String) async throws -> Bool {
        try store.remove(key)
    }

    func removeAll() async throws {
        try store.removeAll()
    }
}

/// The four requirements, batch reads and batch writes.
private struct BatchTier: RemoteCacheBatchReading, RemoteCacheBatchWriting {
    let plain: PlainTier

    init(store: DictionaryStore) { plain = PlainTier(store: store) }

    func entry(forKey key: String) async throws -> RemoteCacheEntry<String>? { try await plain.entry(forKey: key) }
    func setValue(_ value: String, forKey key: String, ttl: Duration?) async throws {
        try await plain.setValue(value, forKey: key, ttl: ttl)
    }
    func removeValue(forKey key: String) async throws -> Bool { try await plain.removeValue(forKey: key) }
    func removeAll() async throws { try await plain.removeAll() }

    func entries(forKeys keys: [String]) async throws -> [RemoteCacheEntry<String>?] {
        try plain.store.read(keys, batch: true)
    }

    func setValues(_ values: [(key: String, value: String)], ttl: Duration?) async throws {
        try plain.store.write(values, ttl: ttl, batch: true)
    }
}

extension FleetLoadLock.Attempt {
    fileprivate var isUnavailable: Bool {
        if case .unavailable = self { return true }
        return false
    }
}
