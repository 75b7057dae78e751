import StashTestSupport
import Testing
@testable import Stash

@Suite(.timeLimit(.minutes(5))) struct LoadCoordinatorConcurrencyTests {
    @Test func aThousandCallersShareOneLoad() async throws {
        let coordinator = LoadCoordinator<String, Int>(clock: ManualClock())
        let gate = TestGate()
        let loads = Counter()
        let callers = 1_000
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<callers {
                group.addTask {
                    try await coordinator.value(forKey: "hot") {
                        loads.increment()
                        try await gate.wait()
                        return 42
                    }
                }
            }
            try await yield(until: { coordinator.waiterCount(forKey: "hot") == callers }, onTimeout: gate.open)
            gate.open()
            var answers = 0
            for try await value in group {
                #expect(value == 42)
                answers += 1
            }
            #expect(answers == callers)
        }
        #expect(loads.count == 1)
    }

    @Test func neverTwoLoadsOfOneKeyAtOnce() async throws {
        let coordinator = LoadCoordinator<Int, Int>(clock: ManualClock())
        let loads = (0..<16).map { _ in Counter() }
        let running = (0..<16).map { _ in LockedValue(0) }
        let overlaps = Counter()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<64 {
                group.addTask {
                    for round in 0..<50 {
                        let key = (task + round) % 16
                        let value = try await coordinator.value(forKey: key) {
                            loads[key].increment()
                            if running[key].withLock({ $0 += 1; return $0 }) > 1 { overlaps.increment() }
                            await Task.yield()
                            running[key].withLock { $0 -= 1 }
                            return key * 10
                        }
                        #expect(value == key * 10)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(overlaps.count == 0)
        #expect(loads.allSatisfy { $0.count > 0 })
        for key in 0..<16 { #expect(!coordinator.isLoading(key)) }
    }
}
