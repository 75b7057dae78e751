import BenchSupport
import Foundation
import Stash

/// Writers sharing one DiskCache: the same number of small values written by one
/// thread, and by several threads at once (each its own slice of distinct keys),
/// into a fresh cache (the default kind, no limits, no auto-trim), started
/// together. The figure that counts is the speed-up: the several threads'
/// throughput over the single thread's, which group commit (writers arriving
/// while a commit is in flight share the next one) is there to raise. Every
/// write returns only once committed, as in the single-threaded workloads.
public struct ConcurrentWriteResult: Sendable, Codable {
    public var threads: Int
    public var valueSize: Int
    /// Values written per run, in total (split evenly between the threads).
    public var writes: Int
    /// Nanoseconds per run: one thread writing `writes` values.
    public var singleThreadRuns: [UInt64]
    /// Nanoseconds per run: `threads` threads writing `writes / threads` values each,
    /// from their common start until the last one has finished.
    public var multiThreadRuns: [UInt64]
    /// The process's CPU time in the same runs (all threads): what the writes cost
    /// in CPU, whatever else the machine is running. Optional for older reports.
    public var singleThreadCPURuns: [UInt64]? = nil
    public var multiThreadCPURuns: [UInt64]? = nil

    public var medianSingleThreadNanosecondsPerWrite: Double {
        median(singleThreadRuns.map { Double($0) / Double(writes) })
    }

    public var medianMultiThreadNanosecondsPerWrite: Double {
        median(multiThreadRuns.map { Double($0) / Double(writes) })
    }

    /// Median CPU nanoseconds per write, one thread and the threads.
    public var medianCPUNanosecondsPerWrite: (single: Double, multi: Double)? {
        guard let single = singleThreadCPURuns, let multi = multiThreadCPURuns, !single.isEmpty, !multi.isEmpty else {
            return nil
        }
        return (median(single.map { Double($0) / Double(writes) }), median(multi.map { Double($0) / Double(writes) }))
    }

    /// The threads' throughput over one thread's: ratio of the median times.
    public var speedUp: Double {
        medianSingleThreadNanosecondsPerWrite / medianMultiThreadNanosecondsPerWrite
    }
}

/// The plan of the concurrent-writes measurement.
public struct ConcurrentWritePlan: Sendable, Codable {
    public var threads: Int
    public var writes: Int
    public var valueSize: Int

    public static func make(quick: Bool) -> ConcurrentWritePlan {
        ConcurrentWritePlan(threads: 8, writes: quick ? 800 : 2_000, valueSize: 100)
    }
}

/// Runs the concurrent-writes measurement: per round, one thread and then the
/// threads (the order alternating between rounds), each in a fresh folder.
public func measureConcurrentWrites(_ plan: ConcurrentWritePlan, baseDirectory: String, runs: Int, warmup: Int,
                                    seed: UInt64, progress: ProgressHandler?) throws -> ConcurrentWriteResult {
    var generator = SeededGenerator(seed: seed)
    let value = Data((0..<plan.valueSize).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
    let keys = (0..<plan.writes).map { "key\($0)" }
    var result = ConcurrentWriteResult(threads: plan.threads, valueSize: plan.valueSize, writes: plan.writes,
                                       singleThreadRuns: [], multiThreadRuns: [], singleThreadCPURuns: [],
                                       multiThreadCPURuns: [])
    let fileManager = FileManager.default
    for round in 0..<(warmup + runs) {
        let orders = round % 2 == 0 ? [1, plan.threads] : [plan.threads, 1]
        for threads in orders {
            let label = round < warmup ? "warm-up" : "run \(round - warmup + 1)/\(runs)"
            progress?("concurrent writes: \(label), \(threads) thread(s)")
            let directory = (baseDirectory as NSString).appendingPathComponent("concurrent-\(round)-\(threads)")
            try? fileManager.removeItem(atPath: directory)
            try fileManager.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? fileManager.removeItem(atPath: directory) }
            let cache = try openQuiescedDiskCache(directory: directory, storage: DefaultKind.kind).cache
            let (nanoseconds, cpuNanoseconds) = try writeConcurrently(cache: cache, keys: keys, value: value, threads: threads)
            let count = try cache.count
            cache.close()
            if count != keys.count {
                throw BenchError("concurrent writes: \(count) entries after writing \(keys.count) distinct keys")
            }
            guard round >= warmup else { continue }
            if threads == 1 {
                result.singleThreadRuns.append(nanoseconds)
                result.singleThreadCPURuns?.append(cpuNanoseconds)
            } else {
                result.multiThreadRuns.append(nanoseconds)
                result.multiThreadCPURuns?.append(cpuNanoseconds)
            }
        }
    }
    return result
}

/// Writes `keys` into `cache` from `threads` threads (thread t takes every
/// `threads`th key from t), started together; the nanoseconds from the start
/// until the last write returned, and the process's CPU nanoseconds meanwhile.
private func writeConcurrently(cache: DiskCache<Data>, keys: [String], value: Data, threads: Int) throws
    -> (wall: UInt64, cpu: UInt64)
{
    let ready = DispatchGroup(), done = DispatchGroup()
    let start = DispatchSemaphore(value: 0)
    let failures = FailureBox()
    for thread in 0..<threads {
        ready.enter()
        done.enter()
        let worker = Thread {
            ready.leave()
            start.wait()
            do {
                for index in stride(from: thread, to: keys.count, by: threads) {
                    try cache.setValue(value, forKey: keys[index])
                }
            } catch {
                failures.record("\(error)")
            }
            done.leave()
        }
        worker.stackSize = 1 << 20
        worker.start()
    }
    ready.wait()
    let cpuBegan = processCPUNanoseconds()
    let began = monotonicNanoseconds()
    for _ in 0..<threads { start.signal() }
    done.wait()
    let ended = monotonicNanoseconds()
    let cpuEnded = processCPUNanoseconds()
    if let failure = failures.first { throw BenchError("concurrent writes: a write failed: \(failure)") }
    return (ended - began, cpuEnded - cpuBegan)
}

/// The first failure of any writer thread.
private final class FailureBox: @unchecked Sendable {
    // @unchecked Sendable: `message` is only touched with `lock` held.
    private let lock = NSLock()
    private var message: String?

    func record(_ text: String) {
        lock.lock()
        defer { lock.unlock() }
        if message == nil { message = text }
    }

    var first: String? {
        lock.lock()
        defer { lock.unlock() }
        return message
    }
}
