import Testing
@testable import Stash

/// Seeded random sequences of loads, writes, removals, invalidations and
/// clock steps, run against `MemoryCache` and against a plain model of the
/// get-or-load rules; after every step both must agree on what each call
/// returned and on which keys hold a fresh value.
@Suite(.timeLimit(.minutes(5))) struct LoadingModelTests {
    /// The rules of `value(forKey:orLoad:)` for one task at a time, in plain
    /// dictionaries, with no eviction (the cache under test has no limits).
    struct Model {
        struct Entry {
            var value: Int
            var freshUntil: Int64
            /// How long past its expiry it is kept: loads store the options' grace, writes none.
            var grace: Int64
            var keepUntil: Int64 { freshUntil.addingClamped(grace) }
        }

        let options: LoadOptions
        var now: Int64 = 0
        var entries: [String: Entry] = [:]
        var errorsUntil: [String: Int64] = [:]

        var ttl: Int64 { options.ttl?.nanosecondsClamped ?? .max }
        var grace: Int64 { options.staleIfError?.nanosecondsClamped ?? 0 }

        func isFresh(_ key: String) -> Bool {
            entries[key].map { now < $0.freshUntil } ?? false
        }

        func stale(_ key: String) -> Int? {
            guard let entry = entries[key], now >= entry.freshUntil, now < entry.keepUntil else { return nil }
            return entry.value
        }

        /// What the call returns: a value, or nil for a thrown error.
        mutating func load(_ key: String, succeeds: Bool, value: Int) -> Int? {
            if let entry = entries[key], now < entry.freshUntil { return entry.value }
            if let until = errorsUntil[key], now < until { return stale(key) }
            if succeeds {
                let freshUntil = now.addingClamped(ttl)
                entries[key] = Entry(value: value, freshUntil: freshUntil, grace: grace)
                return value
            }
            if let errorTTL = options.errorTTL { errorsUntil[key] = now.addingClamped(errorTTL.nanosecondsClamped) }
            return stale(key)
        }

        mutating func set(_ key: String, _ value: Int) {
            entries[key] = Entry(value: value, freshUntil: .max, grace: 0)
        }

        mutating func invalidate(_ key: String) {
            errorsUntil[key] = nil
            guard let entry = entries[key], now < entry.freshUntil else { return }
            entries[key] = entry.grace == 0 ? nil : Entry(value: entry.value, freshUntil: now, grace: entry.grace)
        }
    }

    static let optionSets: [LoadOptions] = [
        LoadOptions(ttl: .seconds(10)),
        LoadOptions(ttl: .seconds(10), staleIfError: .seconds(5)),
        LoadOptions(ttl: .seconds(4), staleIfError: .seconds(8), errorTTL: .seconds(3)),
        LoadOptions(staleIfError: .seconds(5), errorTTL: .seconds(2)),
    ]

    @Test(arguments: 0..<8)
    func theCacheFollowsTheModel(seed: Int) async throws {
        var generator = SeededGenerator(seed: UInt64(seed) &* 0x9E37_79B9)
        let options = Self.optionSets[seed % Self.optionSets.count]
        let clock = ManualClock()
        let cache = makeLoadingCache(clock: clock, options: options)
        var model = Model(options: options)
        let keys = (0..<6).map { "k\($0)" }
        for step in 0..<1_500 {
            let key = keys[Int(generator.next() % UInt64(keys.count))]
            let value = Int(generator.next() % 1_000)
            switch generator.next() % 10 {
            case 0, 1:
                let seconds = Int64(generator.next() % 4)
                clock.advance(by: .seconds(seconds))
                model.now += seconds * 1_000_000_000
            case 2:
                cache.setValue(value, forKey: key)
                model.set(key, value)
            case 3:
                _ = cache.removeValue(forKey: key)
                model.entries[key] = nil
            case 4:
                cache.invalidateValue(forKey: key)
                model.invalidate(key)
            default:
                let succeeds = generator.next() % 3 != 0
                let expected = model.load(key, succeeds: succeeds, value: value)
                let got = try? await cache.value(forKey: key) { _ in
                    if succeeds { return value }
                    throw LoadFailure()
                }
                #expect(got == expected, "step \(step): load of \(key)")
            }
            for key in keys {
                #expect(cache.contains(key) == model.isFresh(key), "step \(step): \(key) fresh")
            }
            if step % 100 == 0 { cache.core.checkInvariants() }
        }
    }
}
