import StashTestSupport
import Testing
@testable import Stash

struct LoadFailure: Error, Equatable {}

@Suite(.timeLimit(.minutes(5))) struct LoadCoordinatorTests {
    @Test func aLoadsErrorReachesEveryWaiterAndTheNextCallerLoadsAgain() async throws {
        let coordinator = LoadCoordinator<String, Int>(clock: ManualClock())
        let gate = TestGate()
        let loads = Counter()
        let failing: @Sendable () async throws -> Int = {
            loads.increment()
            try await gate.wait()
            throw LoadFailure()
        }
        async let first: Result<Int, any Error> = Result { try await coordinator.value(forKey: "k", load: failing) }
        try await yield(until: { coordinator.waiterCount(forKey: "k") == 1 }, onTimeout: gate.open)
        async let second: Result<Int, any Error> = Result { try await coordinator.value(forKey: "k", load: failing) }
        try await yield(until: { coordinator.waiterCount(forKey: "k") == 2 }, onTimeout: gate.open)
        gate.open()
        for result in await [first, second] {
            #expect(throws: LoadFailure.self) { try result.get() }
        }
        #expect(loads.count == 1)
        #expect(!coordinator.isLoading("k"))
        // The error was not kept: the next caller runs a load of its own.
        #expect(try await coordinator.value(forKey: "k") { loads.increment() } == 2)
    }

    @Test func cancellingOneWaiterLeavesTheLoadToTheOthers() async throws {
        let coordinator = LoadCoordinator<String, Int>(clock: ManualClock())
        let gate = TestGate()
        let wasCancelled = LockedValue(false)
        let load: @Sendable () async throws -> Int = {
            try await gate.wait()
            wasCancelled.withLock { $0 = Task.isCancelled }
            return 7
        }
        let cancelled = Task { try await coordinator.value(forKey: "k", load: load) }
        try await yield { coordinator.waiterCount(forKey: "k") == 1 }
        let kept = Task { try await coordinator.value(forKey: "k", load: load) }
        try await yield { coordinator.waiterCount(forKey: "k") == 2 }

        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(coordinator.waiterCount(forKey: "k") == 1)
        gate.open()
        #expect(try await kept.value == 7)
        #expect(wasCancelled.withLock { $0 } == false)
    }

    @Test func cancellingEveryWaiterCancelsTheLoad() async throws {
        let coordinator = LoadCoordinator<String, Int>(clock: ManualClock())
        let started = TestGate()
        let sawCancellation = TestGate()
        let load: @Sendable () async throws -> Int = {
            started.open()
            // Waits for cancellation: the only way this load ends.
            while !Task.isCancelled { await Task.yield() }
            sawCancellation.open()
            throw CancellationError()
        }
        let waiter = Task { try await coordinator.value(forKey: "k", load: load) }
        try await started.wait()
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        try await sawCancellation.wait()
        // The abandoned load is forgotten at once: the next caller starts afresh.
        #expect(try await coordinator.value(forKey: "k") { 1 } == 1)
    }

    @Test func aLoaderAskingForItsOwnKeyGetsAnErrorNotAHang() async throws {
        let coordinator = LoadCoordinator<String, Int>(clock: ManualClock())
        let outcome = await Result {
            try await coordinator.value(forKey: "a") {
                try await coordinator.value(forKey: "b") {
                    // b's loader comes back to a: a cycle.
                    try await coordinator.value(forKey: "a") { 0 }
                }
            }
        }
        #expect { try outcome.get() } throws: { StashError.Code.recursiveLoad ~= $0 }
    }

    @Test func aLoaderMayLoadOtherKeys() async throws {
        let coordinator = LoadCoordinator<String, Int>(clock: ManualClock())
        let value = try await coordinator.value(forKey: "a") {
            let b = try await coordinator.value(forKey: "b") { 2 }
            return b + 1
        }
        #expect(value == 3)
    }

    @Test func aTimeoutAnswersTheWaiterWhileTheLoadGoesOn() async throws {
        let clock = ManualClock()
        let coordinator = LoadCoordinator<String, Int>(clock: clock)
        let gate = TestGate()
        let stored = LockedValue<Int?>(nil)
        let load: @Sendable () async throws -> Int = {
            try await gate.wait()
            stored.withLock { $0 = 5 }
            return 5
        }
        let impatient = Task { try await coordinator.value(forKey: "k", timeout: .seconds(2), load: load) }
        try await yield { clock.sleeperCount == 1 }
        clock.advance(by: .seconds(1))
        #expect(coordinator.waiterCount(forKey: "k") == 1)
        clock.advance(by: .seconds(1))
        await #expect { try await impatient.value } throws: { StashError.Code.timedOut ~= $0 }

        // The load goes on: a later caller joins it and gets its value.
        #expect(coordinator.isLoading("k"))
        let patient = Task { try await coordinator.value(forKey: "k", load: load) }
        try await yield { coordinator.waiterCount(forKey: "k") == 1 }
        gate.open()
        #expect(try await patient.value == 5)
        #expect(stored.withLock { $0 } == 5)
        #expect(clock.sleeperCount == 0)
    }

    @Test func aWaiterAnsweredBeforeItsTimeoutLeavesNoTimerBehind() async throws {
        let clock = ManualClock()
        let coordinator = LoadCoordinator<String, Int>(clock: clock)
        #expect(try await coordinator.value(forKey: "k", timeout: .seconds(1)) { 3 } == 3)
        try await yield { clock.sleeperCount == 0 }
    }

    @Test func startIfIdleRunsOneBackgroundLoad() async throws {
        let coordinator = LoadCoordinator<String, Int>(clock: ManualClock())
        let gate = TestGate()
        let loads = Counter()
        let load: @Sendable () async throws -> Int = {
            loads.increment()
            try await gate.wait()
            return 1
        }
        #expect(coordinator.startIfIdle("k", load: load))
        #expect(!coordinator.startIfIdle("k", load: load))
        // A caller joins the background load rather than starting another.
        let joined = Task { try await coordinator.value(forKey: "k", load: load) }
        try await yield { coordinator.waiterCount(forKey: "k") == 1 }
        gate.open()
        #expect(try await joined.value == 1)
        #expect(loads.count == 1)
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
