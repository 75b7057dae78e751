#if Redis
import Foundation
import StashTestSupport
import Testing
@testable import Stash
@testable import StashRedis

/// Workers each own a few keys, which they write with increasing versions,
/// and read every worker's keys; each remembers the highest version it has seen of each key.
struct Burst: Sendable {
    let cache: Cache<String>
    let workers = 4
    let keysPerWorker = 8
    let progress = ProgressCounter()
    let stop = LockedValue(false)
    let writing = LockedValue(true)
    let failures = LockedValue<[String]>([])
    /// The last version each key was written with (the reference model).
    let lastWritten = LockedValue<[String: Int]>([:])

    func key(_ worker: Int, _ index: Int) -> String { "w\(worker)-k\(index)" }

    func run() async {
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<workers {
                group.addTask { await work(worker) }
            }
        }
    }

    /// Every key's last write is what the cache reads (the local tiers kept every write), and
    /// Redis holds that write or nothing, never an older one.
    func checkEveryLastWrite(in tier: RedisCacheTier<String>) async throws {
        for (key, version) in lastWritten.withLock({ $0 }) {
            let local = try await cache.value(forKey: key)
            #expect(local == String(version), "\(key)")
            let shared = try await tier.entry(forKey: key)?.value
            #expect(shared == nil || shared == String(version), "\(key): Redis holds \(shared ?? "-"), the cache wrote \(version)")
        }
    }

    private func work(_ worker: Int) async {
        var generator = SeededGenerator(seed: UInt64(worker) + 17)
        var seen: [String: Int] = [:]
        var version = 0
        while !stop.withLock({ $0 }) {
            do {
                if Bool.random(using: &generator), writing.withLock({ $0 }) {
                    let key = key(worker, Int.random(in: 0..<keysPerWorker, using: &generator))
                    version += 1
                    try await cache.setValue(String(version), forKey: key)
                    lastWritten.withLock { $0[key] = version }
                    seen[key] = version
                } else {
                    let key = key(Int.random(in: 0..<workers, using: &generator), Int.random(in: 0..<keysPerWorker, using: &generator))
                    if let read = try await cache.value(forKey: key).flatMap({ Int($0) }) {
                        if read < seen[key, default: 0] {
                            failures.withLock { $0.append("\(key): read \(read) after seeing \(seen[key, default: 0])") }
                        }
                        seen[key] = read
                    }
                }
            } catch {
                failures.withLock { $0.append("a call failed: \(error)") }
            }
            progress.increment()
            // A memory hit never suspends: let the cache's own tasks and the test run too.
            await Task.yield()
        }
    }
}
#endif  // Redis
