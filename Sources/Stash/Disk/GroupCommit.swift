/// Group commit: callers that arrive while a commit is in flight queue up, and
/// the next commit takes all of them at once.
///
/// A caller submits one job and blocks until a commit that includes it has run,
/// then returns that job's own outcome. If no commit is in flight, the caller
/// commits its job at once, alone (the single-threaded path: one lock round trip
/// more than calling `commit` directly). Otherwise it queues; when the commit in
/// flight ends, one of the queued callers becomes the leader, takes every job
/// queued so far and commits them together, while the others wait for its
/// outcomes. So a commit's fixed cost (for ``DiskCacheCore``: one SQLite
/// transaction, its WAL append and its totals update) is shared by every writer
/// that arrived during the previous one, and each writer still returns only once
/// its own write is committed.
///
/// - Important: `commit` runs on the leader's thread without this queue's lock,
///   and must return exactly one outcome per job, in order.
/// - Thread-safety: every member may be called from any thread.
final class GroupCommit<Job, Outcome>: @unchecked Sendable {
    // @unchecked Sendable: `queued` and `isCommitting` are only touched with `lock`
    // held; a ticket's `outcome` is written by the leader with `lock` held and read
    // by its submitter with `lock` held.

    /// One queued job and, once committed, its outcome.
    private final class Ticket {
        let job: Job
        var outcome: Outcome?

        init(_ job: Job) {
            self.job = job
        }
    }

    private let lock = Lock()
    private let committed = Condition()
    private var queued: [Ticket] = []
    private var isCommitting = false
    /// A test hook: called, with this queue's lock held, each time a job is
    /// queued behind a commit in flight. `nil` (the default) outside tests.
    private let afterQueuing: (@Sendable () -> Void)?

    /// A queue with no job in flight.
    ///
    /// - Parameter afterQueuing: For tests: called (with the queue's lock held, so
    ///   it must not submit) each time a job queues behind a commit in flight.
    init(afterQueuing: (@Sendable () -> Void)? = nil) {
        self.afterQueuing = afterQueuing
    }

    /// Commits `job`, alone or with the jobs queued beside it, and returns its outcome.
    ///
    /// - Parameter commit: Commits a batch of jobs (in arrival order) and returns
    ///   their outcomes in the same order. Called on this thread if it leads the
    ///   batch, not at all if another thread's commit takes the job.
    /// - Complexity: Blocks for the commit in flight, if any, then for the one
    ///   that includes `job`.
    func submit(_ job: Job, commit: ([Job]) -> [Outcome]) -> Outcome {
        lock.lock()
        if !isCommitting && queued.isEmpty {
            isCommitting = true
            lock.unlock()
            let outcome = commit([job])[0]
            lock.lock()
            isCommitting = false
            committed.broadcast()
            lock.unlock()
            return outcome
        }
        let ticket = Ticket(job)
        queued.append(ticket)
        afterQueuing?()
        while true {
            if let outcome = ticket.outcome {
                lock.unlock()
                return outcome
            }
            if isCommitting {
                committed.wait(lock)
                continue
            }
            // Lead: take every queued job, this one among them.
            isCommitting = true
            let batch = queued
            queued.removeAll(keepingCapacity: true)
            lock.unlock()
            let outcomes = commit(batch.map(\.job))
            precondition(outcomes.count == batch.count, "a group commit returned \(outcomes.count) outcomes for \(batch.count) jobs")
            lock.lock()
            for (ticket, outcome) in zip(batch, outcomes) {
                ticket.outcome = outcome
            }
            isCommitting = false
            committed.broadcast()
        }
    }
}
