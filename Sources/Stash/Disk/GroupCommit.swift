/// Group commit: callers that arrive while a commit is in flight queue up, and
/// the next commit takes all of them at once.
///
/// A caller submits one job and blocks until a commit that includes it has run,
/// then returns that job's own outcome. If no commit is in flight, the caller
/// commits its job at once, alone (the single-threaded path: one lock round trip
/// more than calling `commit` directly). Otherwise it queues. The caller that
/// committed (the leader) then commits whatever queued meanwhile as one batch,
/// and again, until nothing is queued or it has run ``maximumBatchesPerLeader``
/// batches, when it hands the lead to the first queued caller. So a commit's
/// fixed cost (for ``DiskCacheCore``: one SQLite transaction, its WAL append and
/// its totals update) is shared by every writer that arrived during the previous
/// one, and each writer still returns only once its own write is committed.
///
/// The leader keeps leading rather than waking a queued caller to do it, and each
/// queued caller is woken only when its outcome is ready (or it is handed the
/// lead): on few cores a thread woken to commit waits for the scheduler, while
/// the leader is already running.
///
/// - Important: `commit` runs on the leader's thread without this queue's lock,
///   and must return exactly one outcome per job, in order. A leader may run
///   `commit` for other callers' jobs after its own, before it returns.
/// - Thread-safety: every member may be called from any thread.
final class GroupCommit<Job, Outcome>: @unchecked Sendable {
    // @unchecked Sendable: `queued`, `isCommitting` and every ticket's `outcome` and
    // `leads` are only touched with `lock` held. Invariant: nothing is queued
    // unless a commit is in flight (`isCommitting`). A lock of its own rather than a
    // LockedValue: each ticket's condition variable waits on it.

    /// One queued job and, once committed, its outcome.
    private final class Ticket {
        let job: Job
        var outcome: Outcome?
        /// Set when the previous leader hands the lead to this ticket's caller.
        var leads = false
        /// Signalled when `outcome` or `leads` is set.
        let woken = Condition()

        init(_ job: Job) {
            self.job = job
        }
    }

    /// How many batches a leader commits before it hands the lead on, so that a
    /// caller's own return is delayed by at most this many commits.
    static var maximumBatchesPerLeader: Int { 8 }

    private let lock = Lock()
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
    ///   their outcomes in the same order. Called on this thread if it leads,
    ///   possibly for several batches; not at all if another thread's commit
    ///   takes the job.
    /// - Complexity: Blocks for the commit in flight, if any, then for the one
    ///   that includes `job`, and, if this caller leads, for up to
    ///   ``maximumBatchesPerLeader`` commits in all.
    func submit(_ job: Job, commit: ([Job]) -> [Outcome]) -> Outcome {
        lock.lock()
        if !isCommitting {
            // Nothing in flight, so nothing queued: commit this job alone, then
            // whatever queues meanwhile.
            isCommitting = true
            lock.unlock()
            let outcome = commit([job])[0]
            lock.lock()
            _commitQueued(commit, batchesDone: 1)
            lock.unlock()
            return outcome
        }
        let ticket = Ticket(job)
        queued.append(ticket)
        afterQueuing?()
        while ticket.outcome == nil && !ticket.leads {
            ticket.woken.wait(lock)
        }
        if ticket.outcome == nil {
            _commitQueued(commit, batchesDone: 0)
        }
        let outcome = ticket.outcome!
        lock.unlock()
        return outcome
    }

    /// With the lock held and a commit in flight: commits the queued jobs, batch
    /// by batch, until none is queued (the commit is then over) or the leader has
    /// run ``maximumBatchesPerLeader`` batches (the first queued caller then leads).
    private func _commitQueued(_ commit: ([Job]) -> [Outcome], batchesDone: Int) {
        var batches = batchesDone
        while let next = queued.first {
            if batches >= Self.maximumBatchesPerLeader {
                next.leads = true
                next.woken.signal()
                return
            }
            let batch = queued
            queued.removeAll(keepingCapacity: true)
            lock.unlock()
            let outcomes = commit(batch.map(\.job))
            precondition(outcomes.count == batch.count, "a group commit returned \(outcomes.count) outcomes for \(batch.count) jobs")
            lock.lock()
            for (ticket, outcome) in zip(batch, outcomes) {
                ticket.outcome = outcome
                ticket.woken.signal()
            }
            batches += 1
        }
        isCommitting = false
    }
}
