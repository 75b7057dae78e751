import Foundation
import Testing
@testable import Stash

/// Random operations, from fixed seeds, checked against a Dictionary model.
@Suite(.timeLimit(.minutes(5))) struct KVStorageRandomizedTests {
    struct ModelEntry {
        var value: Data
        var extendedData: Data?
        var expiration: Int64?
        var lastAccess: Int64
        var written: Int64
    }

    /// The reference: what the storage must hold.
    struct Model {
        var entries: [String: ModelEntry] = [:]

        var totalSize: Int { entries.values.reduce(0) { $0 + $1.value.count } }

        func isExpired(_ entry: ModelEntry, now: Int64) -> Bool {
            entry.expiration.map { $0 <= now } ?? false
        }

        /// Removes least recently used entries while `shouldRemove` says so.
        mutating func trimLeastRecentlyUsed(while shouldRemove: (Model) -> Bool) -> Int {
            var removed = 0
            for key in entries.sorted(by: { $0.value.lastAccess < $1.value.lastAccess }).map(\.key) {
                guard shouldRemove(self) else { break }
                entries[key] = nil
                removed += 1
            }
            return removed
        }
    }

    @Test(arguments: [1, 42, 20_240_601] as [UInt64])
    func randomOperationsMatchADictionary(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let fixture = try StorageFixture()
        let kind = DiskStorageKind.mixed(inlineThreshold: 64)
        // Every read recorded: the model is exact LRU (accessTimeResolutionRecordsTheFirstReadThenOncePerPeriod
        // in KVStorageTrimTests covers the resolution).
        let options = KVStorageOptions(accessFlushThreshold: 16, accessTimeResolution: .zero, trimBatchSize: 3)
        var storage = try fixture.open(kind: kind, options: options)
        var model = Model()
        let keys = (0..<40).map { "key/\($0)" + ($0 % 7 == 0 ? "\u{0}nul" : "") }

        for step in 0..<1500 {
            fixture.clock.advance(by: .nanoseconds(1))  // every time is distinct
            let now = fixture.clock.nanosecondsNow
            let key = keys.randomElement(using: &random) ?? keys[0]
            let roll = Int.random(in: 0..<100, using: &random)
            let context = Comment(rawValue: "seed \(seed), step \(step), roll \(roll), key \(key)")
            switch roll {
            case 0..<35:
                let size = Int.random(in: 0...200, using: &random)
                let value = testBytes(size, seed: UInt8.random(in: 0...255, using: &random))
                let expiration: Int64? = Bool.random(using: &random) ? now + Int64.random(in: 1...80, using: &random) : nil
                let extended: Data? = Bool.random(using: &random) ? Data([UInt8(size & 0xFF)]) : nil
                try storage.setValue(value, forKey: key, expiration: expiration, extendedData: extended)
                model.entries[key] = ModelEntry(value: value, extendedData: extended, expiration: expiration, lastAccess: now, written: now)
            case 35..<65:
                let item = try storage.value(forKey: key)
                if let entry = model.entries[key], !model.isExpired(entry, now: now) {
                    #expect(item?.value == entry.value, context)
                    #expect(try storage.extendedData(forKey: key) == entry.extendedData, context)
                    #expect(item?.isInline == kind.storesInline(size: entry.value.count), context)
                    model.entries[key]?.lastAccess = now
                } else {
                    #expect(item == nil, context)
                    model.entries[key] = nil
                }
            case 65..<72:
                let existed = try storage.removeValue(forKey: key)
                #expect(existed == (model.entries[key] != nil), context)
                model.entries[key] = nil
            case 72..<78:
                let expected = model.entries[key].map { !model.isExpired($0, now: now) } ?? false
                #expect(try storage.contains(key) == expected, context)
            case 78..<84:
                fixture.clock.advance(by: .nanoseconds(Int64.random(in: 0...30, using: &random)))
            case 84..<87:
                let limit = Int.random(in: 0...30, using: &random)
                let removed = try storage.trim(toCount: limit)
                #expect(removed == model.trimLeastRecentlyUsed { $0.entries.count > limit }, context)
            case 87..<90:
                let limit = Int.random(in: 0...3000, using: &random)
                let removed = try storage.trim(toSize: limit)
                #expect(removed == model.trimLeastRecentlyUsed { $0.totalSize > limit }, context)
            case 90..<93:
                let removed = try storage.removeExpired()
                let expired = model.entries.filter { model.isExpired($0.value, now: now) }.map(\.key)
                #expect(removed == expired.count, context)
                for key in expired { model.entries[key] = nil }
            case 93..<95:
                let age = Int64.random(in: 0...100, using: &random)
                let removed = try storage.trim(toAge: .nanoseconds(age))
                let old = model.entries.filter { $0.value.written <= now - age }.map(\.key)
                #expect(removed == old.count, context)
                for key in old { model.entries[key] = nil }
            case 95..<97:
                storage.close()
                storage = try fixture.open(kind: kind, options: options)
            case 97..<99:
                try storage.flushAccessTimes()
            default:
                #expect(try storage.checkConsistency().isClean, context)
            }
            #expect(try storage.count() == model.entries.count, context)
            #expect(try storage.totalSize() == model.totalSize, context)
            let fileCount = model.entries.values.filter { !kind.storesInline(size: $0.value.count) }.count
            #expect(try storage.totals().fileCount == fileCount, context)
        }

        // Files on disk are exactly those of the model's file-stored values.
        let fileValues = model.entries.values.filter { !kind.storesInline(size: $0.value.count) }.count
        #expect(fixture.dataFiles().count == fileValues)
        #expect(try storage.checkConsistency().isClean)
    }
}
