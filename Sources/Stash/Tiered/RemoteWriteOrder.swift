/// Keeps a cache's changes of one key reaching the remote tier in the order
/// they reached the local tiers.
///
/// A change takes a ticket with ``enqueue(_:)`` while it still holds the key's
/// stripe lock (right after its local write), so tickets are numbered in the
/// local order. ``waitForTurn(_:)`` then suspends until every earlier ticket of
/// the key has called ``finish(_:)``. Changes of different keys never wait for
/// each other, but for those a batch sends together (``waitForSomeTurns(_:)``). A key
/// with no change in flight takes no memory.
///
/// Also `package`: StashHummingbird's persist driver orders its read-then-write `set`s of one
/// key with it.
///
/// It parks its waiters itself rather than in a ``WaiterSet`` (Stash's gate for "wake every
/// waiter once a condition holds"): a finished ticket wakes exactly one waiter, the next ticket,
/// and a waiter is never resumed early (a change must not overtake an earlier one of its key,
/// even when its task is cancelled).
///
/// Thread-safety: all state is behind one lock; waiting suspends, never blocks.
package final class RemoteWriteOrder: Sendable {
    /// One change's place in its key's queue.
    package struct Ticket: Sendable {
        let key: String
        let number: UInt64
    }

    /// A task waiting for a turn: one ticket's, or the first to come of a batch's tickets.
    private enum Waiter {
        case one(CheckedContinuation<Void, Never>)
        /// Parked under each of `tickets`, and removed from all of them when one's turn comes.
        case batch(CheckedContinuation<Void, Never>, tickets: [Ticket])
    }

    private struct Queue {
        var nextNumber: UInt64 = 0
        var serving: UInt64 = 0
        var waiting: [UInt64: Waiter] = [:]
        /// Tickets given up before their turn, with what to run when it comes.
        var abandoned: [UInt64: @Sendable () -> Void] = [:]
    }

    private let queues = LockedValue<[String: Queue]>([:])

    package init() {}

    /// Takes the next ticket for `key`. Call with `key`'s stripe lock held.
    ///
    /// - Complexity: O(1) amortized.
    package func enqueue(_ key: String) -> Ticket {
        queues.withLock { queues in
            let number = queues[key]?.nextNumber ?? 0
            queues[key, default: Queue()].nextNumber = number + 1
            return Ticket(key: key, number: number)
        }
    }

    /// Returns once every earlier ticket of the same key has finished.
    package func waitForTurn(_ ticket: Ticket) async {
        if queues.withLock({ $0[ticket.key]?.serving == ticket.number }) { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now: Bool = queues.withLock { queues in
                if queues[ticket.key]?.serving == ticket.number { return true }
                queues[ticket.key]!.waiting[ticket.number] = .one(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Returns the tickets of `tickets` (of different keys) whose turn has come, waiting until at
    /// least one has: for a batch of changes, sent in as many rounds as their turns come.
    ///
    /// A batch never waits for all its turns at once: two batches that share two keys, in opposite
    /// order of tickets, would each wait for the other forever. It waits only while none of its
    /// tickets is served, and is woken by the first of them whose turn comes, so a served ticket is
    /// always held by a change that is being sent, and every key's queue moves on.
    ///
    /// - Complexity: O(`tickets.count`) per wait.
    package func waitForSomeTurns(_ tickets: [Ticket]) async -> [Ticket] {
        precondition(!tickets.isEmpty, "a batch of no changes has no turn")
        let served = queues.withLock { queues in tickets.filter { queues[$0.key]?.serving == $0.number } }
        if !served.isEmpty { return served }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now: Bool = queues.withLock { queues in
                if tickets.contains(where: { queues[$0.key]?.serving == $0.number }) { return true }
                for ticket in tickets { queues[ticket.key]!.waiting[ticket.number] = .batch(continuation, tickets: tickets) }
                return false
            }
            if now { continuation.resume() }
        }
        return queues.withLock { queues in tickets.filter { queues[$0.key]?.serving == $0.number } }
    }

    /// Ends `ticket`'s turn and lets the next ticket of its key go.
    ///
    /// An abandoned ticket whose turn comes holds it while its `onTurn` runs, outside the lock,
    /// so that it runs after every earlier ticket and before any later one goes.
    package func finish(_ ticket: Ticket) {
        var current = ticket
        while true {
            let (onTurn, next): ((@Sendable () -> Void)?, CheckedContinuation<Void, Never>?) = queues.withLock { queues in
                guard var queue = queues[current.key] else { return (nil, nil) }
                queue.serving += 1
                if let onTurn = queue.abandoned.removeValue(forKey: queue.serving) {
                    queues[current.key] = queue  // the abandoned ticket's turn: no later one goes
                    return (onTurn, nil)
                }
                if queue.serving == queue.nextNumber {
                    queues[current.key] = nil
                    return (nil, nil)
                }
                let waiter = queue.waiting.removeValue(forKey: queue.serving)
                queues[current.key] = queue
                switch waiter {
                case .one(let next):
                    return (nil, next)
                case .batch(let next, let tickets):
                    // Woken once: no longer parked under the batch's other tickets.
                    for other in tickets where other.key != current.key {
                        queues[other.key]?.waiting[other.number] = nil
                    }
                    return (nil, next)
                case nil:
                    return (nil, nil)
                }
            }
            guard let onTurn else {
                next?.resume()
                return
            }
            onTurn()
            current = Ticket(key: current.key, number: current.number + 1)
        }
    }

    /// Gives up `ticket` without a task waiting for its turn: when the turn comes (at once if it
    /// has), `onTurn` runs and the next ticket of the key goes. For a change that is not sent, whose
    /// consequence (marking its key stale) must still come after the changes before it.
    ///
    /// - Complexity: O(1); `onTurn` runs on the thread that finishes the ticket before it.
    package func abandon(_ ticket: Ticket, onTurn: @escaping @Sendable () -> Void) {
        let isTurn: Bool = queues.withLock { queues in
            guard queues[ticket.key]?.serving != ticket.number else { return true }
            queues[ticket.key]!.abandoned[ticket.number] = onTurn
            return false
        }
        if isTurn {
            onTurn()
            finish(ticket)
        }
    }

    /// How many tickets of `key` wait for their turn: for tests.
    func waiterCount(forKey key: String) -> Int {
        queues.withLock { $0[key]?.waiting.count ?? 0 }
    }

    /// The keys with changes taken but not finished.
    var keysInFlight: Set<String> { queues.withLock { Set($0.keys) } }
}
