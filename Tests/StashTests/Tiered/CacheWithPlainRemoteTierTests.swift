import Foundation
import StashTestSupport
import Testing
@testable import Stash

/// A `Cache` over a remote tier that has only `RemoteCacheTier`'s four requirements (a store
/// with no pub/sub, no locks and no multi-key read, as Memcached or DynamoDB would be), and over
/// one that adds batch reads: the cache uses each capability the tier has and does without the
/// others. The Redis tier, which has them all, is tested against real servers in StashRedisTests.
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
}

// MARK: - Tiers over an in-process store

/// A key-value store with expiry, in the process: what the test tiers keep their entries in.
private final class DictionaryStore: Sendable {
    private struct State {
        var entries: [String: (value: String, expires: ContinuousClock.Instant?)] = [:]
        var singleReads = 0
        var batchReads = 0
        var batchedKeys: [String] = []
        var failing = false
    }

    private let state = LockedValue(State())

    var singleReads: Int { state.withLock { $0.singleReads } }
    var batchReads: Int { state.withLock { $0.batchReads } }
    var batchedKeys: [String] { state.withLock { $0.batchedKeys } }
    var count: Int { state.withLock { $0.entries.count } }
    var failing: Bool {
        get { state.withLock { $0.failing } }
        set { state.withLock { $0.failing = newValue } }
    }

    func set(_ value: String, forKey key: String, ttl: Duration?) {
        state.withLock { $0.entries[key] = (value, ttl.map { ContinuousClock.now + $0 }) }
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
        if store.failing { throw CocoaError(.fileWriteUnknown) }
        store.set(value, forKey: key, ttl: ttl)
    }

    func removeValue(forKey key: String) async throws -> Bool {
        try store.remove(key)
    }

    func removeAll() async throws {
        try store.removeAll()
    }
}

/// The four requirements and batch reads.
private struct BatchTier: RemoteCacheBatchReading {
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
}

extension FleetLoadLock.Attempt {
    fileprivate var isUnavailable: Bool {
        if case .unavailable = self { return true }
        return false
    }
}
