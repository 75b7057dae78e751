import BenchSupport
import Foundation
import Synchronization

/// Lines threads up so they start together, and collects what they measured.
final class StartGate: Sendable {
    /// Runs `work(thread)` on `threads` new threads (1 MiB stacks), started together, each timed
    /// on its own, and returns the wall time from the first start to the last end with the sums
    /// of what they returned. Keep what `work` uses alive until this returns (`withExtendedLifetime`).
    static func runTogether(
        _ threads: Int, _ work: @escaping @Sendable (_ thread: Int) -> (lookups: Int, hits: Int, sum: Int)
    ) -> (nanoseconds: UInt64, lookups: Int, hits: Int, sum: Int) {
        let gate = StartGate(threads: threads)
        let done = DispatchSemaphore(value: 0)
        for thread in 0..<threads {
            let worker = Thread {
                gate.arriveAndWait()
                let start = monotonicNanoseconds()
                let outcome = work(thread)
                let end = monotonicNanoseconds()
                gate.record(thread: thread, start: start, end: end, lookups: outcome.lookups, hits: outcome.hits,
                            sum: outcome.sum)
                done.signal()
            }
            worker.stackSize = 1 << 20
            worker.start()
        }
        gate.openWhenAllArrived()
        for _ in 0..<threads { done.wait() }
        return gate.outcome()
    }

    private let arrived = Atomic<Int>(0)
    private let open = Atomic<Bool>(false)
    private let threads: Int
    private let results: Mutex<[(start: UInt64, end: UInt64, lookups: Int, hits: Int, sum: Int)?]>

    init(threads: Int) {
        self.threads = threads
        results = Mutex(Array(repeating: nil, count: threads))
    }

    func arriveAndWait() {
        arrived.add(1, ordering: .acquiringAndReleasing)
        while !open.load(ordering: .acquiring) { sched_yield() }
    }

    func openWhenAllArrived() {
        while arrived.load(ordering: .acquiring) < threads { sched_yield() }
        open.store(true, ordering: .releasing)
    }

    func record(thread: Int, start: UInt64, end: UInt64, lookups: Int, hits: Int, sum: Int) {
        results.withLock { $0[thread] = (start, end, lookups, hits, sum) }
    }

    func outcome() -> (nanoseconds: UInt64, lookups: Int, hits: Int, sum: Int) {
        results.withLock { all in
            let done = all.compactMap { $0 }
            let first = done.map(\.start).min() ?? 0
            let last = done.map(\.end).max() ?? 0
            return (last - first, done.reduce(0) { $0 + $1.lookups }, done.reduce(0) { $0 + $1.hits },
                    done.reduce(0) { $0 &+ $1.sum })
        }
    }
}
