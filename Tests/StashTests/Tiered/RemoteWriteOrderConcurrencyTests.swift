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

    /// A batch waiting for its turns is woken by the first of them to come, whichever key it is
    /// (here the second), so a key of the batch never waits for another key's send.
    @Test func aBatchIsWokenByWhicheverOfItsTurnsComesFirst() async throws {
        let order = RemoteWriteOrder()
        let firstX = order.enqueue("x"), firstY = order.enqueue("y")
        let batch = [order.enqueue("x"), order.enqueue("y")]
        let waiter = Task { await order.waitForSomeTurns(batch).map(\.key) }
        try await yield(until: { order.waiterCount(forKey: "x") == 1 && order.waiterCount(forKey: "y") == 1 })
        order.finish(firstY)  // x's first change is still being sent
        #expect(await waiter.value == ["y"])
        #expect(order.waiterCount(forKey: "x") == 0, "woken once, parked nowhere else")
        order.finish(batch[1])
        order.finish(firstX)
        #expect(await order.waitForSomeTurns([batch[0]]).map(\.key) == ["x"])
        order.finish(batch[0])
        #expect(order.keysInFlight.isEmpty)
    }
}
