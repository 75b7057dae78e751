import StashTestSupport
import Testing
@testable import Stash

/// The order of one key's changes on their way to a remote tier, with changes given up (run
/// under the thread sanitizer in CI).
@Suite(.timeLimit(.minutes(5))) struct RemoteWriteOrderConcurrencyTests {
    @Test func anAbandonedTicketRunsItsTurnBetweenTheTicketsAroundIt() async throws {
        let order = RemoteWriteOrder()
        let events = LockedValue<[String]>([])
        let first = order.enqueue("k")
        let abandoned = order.enqueue("k")
        let third = order.enqueue("k")
        await order.waitForTurn(first)
        order.abandon(abandoned) { events.withLock { $0.append("abandoned") } }
        let waiter = Task {
            await order.waitForTurn(third)
            events.withLock { $0.append("third") }
            order.finish(third)
        }
        try await yield(until: { order.waiterCount(forKey: "k") == 1 })
        #expect(events.withLock { $0 }.isEmpty, "not before the first ticket finishes")
        events.withLock { $0.append("first") }
        order.finish(first)
        await waiter.value
        #expect(events.withLock { $0 } == ["first", "abandoned", "third"])
        #expect(order.keysInFlight.isEmpty)
    }

    @Test func aTicketAbandonedOnItsTurnRunsAtOnceAndLetsTheNextGo() async {
        let order = RemoteWriteOrder()
        let ran = Counter()
        let only = order.enqueue("k")
        order.abandon(only) { ran.increment() }
        #expect(ran.count == 1)
        #expect(order.keysInFlight.isEmpty)
        let next = order.enqueue("k")
        await order.waitForTurn(next)  // would hang if the abandoned ticket had kept the turn
        order.finish(next)
        let a = order.enqueue("a"), b = order.enqueue("b")
        order.abandon(b) { ran.increment() }  // another key: its own turn at once
        #expect(ran.count == 2)
        order.finish(a)
    }
}
