import Dispatch
import Foundation
import Testing
@testable import Stash

/// Runs under the thread sanitizer in CI (`.ci/run` filters on "Concurrency").
@Suite(.timeLimit(.minutes(5))) struct TieredConcurrencyTests {
    /// Values carry their key, so a read can check it got its own key's bytes.
    private static func value(for key: String, writer: Int, step: Int, rng: inout SeededGenerator) -> String {
        let padding = String(repeating: "x", count: Int.random(in: 0...40, using: &rng) * (step % 5 == 0 ? 600 : 1))
        return "\(key)|\(writer)|\(padding)"
    }

    @Test func eightThreadsOnOneDiskCacheKeepItConsistent() throws {
        try withTemporaryDirectory { directory in
            let cache = try DiskCache<String>(
                directory: directory.path, codec: .string,
                configuration: .init(
                    storage: .mixed(inlineThreshold: 1_024), countLimit: 150, autoTrimInterval: .milliseconds(20)))
            let failures = EvictionRecorder<String, String>()
            DispatchQueue.concurrentPerform(iterations: 8) { thread in
                var rng = SeededGenerator(seed: UInt64(thread) &+ 7)
                for step in 0..<400 {
                    let key = "key-\(Int.random(in: 0..<200, using: &rng))"
                    do {
                        switch Int.random(in: 0..<10, using: &rng) {
                        case 0..<4:
                            if let value = try cache.value(forKey: key), !value.hasPrefix(key + "|") {
                                failures.callback(key, value, .removed)
                            }
                        case 4..<8:
                            try cache.setValue(Self.value(for: key, writer: thread, step: step, rng: &rng), forKey: key)
                        case 8:
                            try cache.removeValue(forKey: key)
                        default:
                            _ = try cache.contains(key)
                            // Limits change while other threads read (a read checks the age limit).
                            if thread == 0 { cache.ageLimit = step.isMultiple(of: 2) ? .seconds(3_600) : nil }
                        }
                    } catch {
                        failures.callback(key, "\(error)", .removed)
                    }
                }
            }
            cache.autoTrimInterval = nil
            #expect(failures.all.isEmpty, "\(failures.all.prefix(3))")
            #expect(try cache.count <= 150)
            #expect(try cache.verify().isClean)
        }
    }

    @Test func eightThreadsOnOneTieredCacheKeepTheTiersInAgreement() throws {
        try withTemporaryDirectory { directory in
            let cache = try Cache<String>(
                memory: MemoryCache<String, String>(configuration: .init(countLimit: 50, autoTrimInterval: nil)),
                disk: DiskCache<String>(
                    directory: directory.path, codec: .string,
                    configuration: .init(autoTrimInterval: nil)))
            let failures = EvictionRecorder<String, String>()
            DispatchQueue.concurrentPerform(iterations: 8) { thread in
                var rng = SeededGenerator(seed: UInt64(thread) &+ 99)
                for step in 0..<300 {
                    let key = "key-\(Int.random(in: 0..<100, using: &rng))"
                    do {
                        switch Int.random(in: 0..<10, using: &rng) {
                        case 0..<5:
                            if let value = try cache.value(forKey: key), !value.hasPrefix(key + "|") {
                                failures.callback(key, value, .removed)
                            }
                        case 5..<8:
                            try cache.setValue(Self.value(for: key, writer: thread, step: step, rng: &rng), forKey: key)
                        default:
                            try cache.removeValue(forKey: key)
                        }
                    } catch {
                        failures.callback(key, "\(error)", .removed)
                    }
                }
            }
            #expect(failures.all.isEmpty, "\(failures.all.prefix(3))")
            for (key, value, _) in cache.memory?.snapshot() ?? [] {
                #expect(try cache.disk?.value(forKey: key) == value, "memory agrees with disk for \(key)")
            }
        }
    }
}
