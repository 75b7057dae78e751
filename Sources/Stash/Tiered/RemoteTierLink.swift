import Logging

/// The remote half of a ``Cache``: the tier, the order of each key's changes,
/// the keys whose shared copy may be older than the local one, the outage log,
/// and the invalidation subscription.
///
/// **Stale keys.** A change that failed to reach the remote tier leaves the
/// shared copy older than the local tiers' (or the key missing locally while
/// the shared copy lives on). Such a key is marked stale: reads do not take it
/// from the remote tier, an invalidation of everything keeps its local copy,
/// and once the remote tier answers again the key is removed there (which
/// tells the other instances), so the fleet forgets the old copy. While the
/// invalidation subscription is down, repairs wait: the ``RemoteInvalidation/all``
/// that comes with its return keeps the stale keys' local copies, which a key
/// already repaired would no longer be (it would be dropped everywhere, and this
/// instance's last write of it lost). Past
/// ``maximumStaleKeys`` (or after a failed `removeAll`), the whole remote tier
/// is distrusted until a `removeAll` succeeds there.
///
/// **Outages.** Logged by an ``IncidentLog``: the first failure of an incident
/// (warning), and its end (info); nothing in between. An incident ends at the
/// first success at least ``recoveryQuietPeriod`` after its last failure, on the
/// cache's clock: a restarted store that answers once and fails again (while it
/// reloads its data, or calls that were under way when it died completing out of
/// order) stays one incident, logged once, with one recovery. A lost invalidation
/// subscription is a failure of the same log, and its applied return a success: so a
/// restart is one incident however many calls and subscriptions it breaks, and a
/// subscription lost alone is logged too (the tier logs it at debug level only).
///
/// Thread-safety: all state is behind one lock; remote calls run outside it.
final class RemoteTierLink<Value: Sendable>: Sendable {
    /// A change of one key, on its way to the remote tier.
    enum Change: Sendable {
        case set(Value, ttl: Duration?)
        case remove
    }

    private struct State {
        /// Each stale key with the number of the failure that marked it last, so
        /// that a repair clears only marks no newer failure has renewed.
        var staleKeys: [String: UInt64] = [:]
        var staleMarks: UInt64 = 0
        var everythingStale = false
        var repairing = false
        var subscribed = false
        /// Whether the subscription is lost (told by the tier) and not yet restored.
        var subscriptionDown = false
        /// Counts the losses, so that a restoration applies only to the loss it follows.
        var subscriptionLosses: UInt64 = 0
        var stopped = false
        /// Whether ``close()`` stops the subscription itself (``didSubscribe()`` then leaves it).
        var closing = false
        /// Changes of the synchronous API running in the background, and the most allowed.
        var pendingSends = 0
        var maximumPendingSends = RemoteTierLink.defaultMaximumPendingSends
        /// Whether changes are being left unsent (logged once, when it starts).
        var overflowing = false
        var subscriptionWaiters = WaiterSet()
        var subscriptionTask: Task<Void, Never>?
        var invalidationObserver: (@Sendable (RemoteInvalidation) -> Void)?

        /// Notes that a change of `key` reached the remote tier.
        ///
        /// While the subscription is lost, the store that took the change may be a restarted one,
        /// which the tier empties before the subscription's return is heard (Redis reloading an
        /// older append-only file): the key stays marked, so that the invalidation of everything
        /// keeps its local copy and the repair that follows removes whatever shared copy is left.
        /// Otherwise the shared copy is current.
        mutating func didSend(_ key: String) {
            if subscriptionDown { markStale(key) } else { staleKeys[key] = nil }
        }

        /// Marks `key` stale with a new mark; past ``RemoteTierLink/maximumStaleKeys``, distrusts
        /// the whole tier instead.
        mutating func markStale(_ key: String) {
            guard !everythingStale else { return }
            staleMarks += 1
            staleKeys[key] = staleMarks
            if staleKeys.count > RemoteTierLink.maximumStaleKeys {
                staleKeys.removeAll()
                everythingStale = true
            }
        }
    }

    /// Past this many stale keys, the whole remote tier is distrusted instead.
    static var maximumStaleKeys: Int { 10_000 }

    /// The most changes of the synchronous API on their way to the remote tier at a time, each a
    /// task holding its value. Past it, a change is not sent: its key is marked stale instead (in
    /// its order), as if the send had failed, so the local tiers keep the new value, no read takes
    /// the key from the remote tier, and a repair removes it there once the tier keeps up (telling
    /// the other instances). A burst of writes under a slow remote tier costs bounded memory.
    static var defaultMaximumPendingSends: Int { 10_000 }

    /// The changes of the synchronous API running in the background now.
    var pendingSendCount: Int { state.withLock { $0.pendingSends } }

    /// ``defaultMaximumPendingSends``, settable for tests.
    var maximumPendingSends: Int {
        get { state.withLock { $0.maximumPendingSends } }
        set { state.withLock { $0.maximumPendingSends = newValue } }
    }

    /// How long after an incident's last failure a success ends it: longer
    /// than a restarted store takes to fail again, short beside an outage.
    static var recoveryQuietPeriod: Duration { .seconds(1) }

    let tier: any RemoteCacheTier<Value>
    /// The tier's capabilities, `nil` where it has none (see ``RemoteCacheTier``), resolved once.
    private let invalidating: (any RemoteCacheInvalidating<Value>)?
    private let batchReading: (any RemoteCacheBatchReading<Value>)?
    private let batchWriting: (any RemoteCacheBatchWriting<Value>)?
    let locking: (any RemoteCacheLocking<Value>)?
    private let inserting: (any RemoteCacheInserting<Value>)?
    let order = RemoteWriteOrder()
    let logger: Logger
    /// The outages, on the cache's clock.
    private let outages: IncidentLog
    private let state = LockedValue(State())
    /// The cache's background work, where sends and repairs run.
    private let background: BackgroundTasks

    init(tier: any RemoteCacheTier<Value>, clock: any CacheClock, logger: Logger, background: BackgroundTasks) {
        self.tier = tier
        invalidating = tier as? any RemoteCacheInvalidating<Value>
        batchReading = tier as? any RemoteCacheBatchReading<Value>
        batchWriting = tier as? any RemoteCacheBatchWriting<Value>
        locking = tier as? any RemoteCacheLocking<Value>
        inserting = tier as? any RemoteCacheInserting<Value>
        self.logger = logger
        self.background = background
        outages = IncidentLog(logger: logger, clock: clock, quietPeriod: Self.recoveryQuietPeriod)
    }

    // MARK: - Reads and changes

    /// The shared entry for `key`; `nil` on a miss, a failure, or when the shared copy is stale.
    ///
    /// Read also while the subscription is lost: what it promotes then goes at the invalidation of
    /// everything that comes with the subscription's return (after the tier has emptied a
    /// restarted store, if it does).
    func entry(forKey key: String) async -> RemoteCacheEntry<Value>? {
        let trusted = state.withLock { !$0.everythingStale && $0.staleKeys[key] == nil }
        guard trusted else { return nil }
        do {
            let entry = try await tier.entry(forKey: key)
            recordSuccess()
            return entry
        } catch {
            recordFailure(error, while: "reading \(key)")
            return nil
        }
    }

    /// The shared entries for `keys` (without duplicates), in order: one round trip when the tier
    /// reads in batches, else one per key. A key whose shared copy is stale is a miss and is not
    /// asked for; a failure is a miss for every key of the batch.
    func entries(forKeys keys: [String]) async -> [RemoteCacheEntry<Value>?] {
        guard let batchReading, keys.count > 1 else {
            var entries: [RemoteCacheEntry<Value>?] = []
            entries.reserveCapacity(keys.count)
            for key in keys { entries.append(await entry(forKey: key)) }
            return entries
        }
        let trusted: [Int] = state.withLock { state in
            state.everythingStale ? [] : keys.indices.filter { state.staleKeys[keys[$0]] == nil }
        }
        var entries = [RemoteCacheEntry<Value>?](repeating: nil, count: keys.count)
        guard !trusted.isEmpty else { return entries }
        do {
            let found = try await batchReading.entries(forKeys: trusted.map { keys[$0] })
            for (index, entry) in zip(trusted, found) { entries[index] = entry }
            recordSuccess()
        } catch {
            recordFailure(error, while: "reading \(trusted.count) keys")
        }
        return entries
    }

    /// Sends `change` once every earlier change of its key has been sent.
    ///
    /// - Returns: For a removal, whether the remote tier held the key (`false` on failure).
    @discardableResult
    func send(_ change: Change, ticket: RemoteWriteOrder.Ticket) async -> Bool {
        await order.waitForTurn(ticket)
        defer { order.finish(ticket) }
        return await sendInTurn(change, forKey: ticket.key)
    }

    /// The most values one batch write carries: a failed batch marks all its keys stale, and past
    /// ``maximumStaleKeys`` the whole remote tier is distrusted (and emptied by the repair).
    static var maximumBatchWrite: Int { 1_000 }

    /// Sends `values` (one per ticket, each of a different key), each once every earlier change of
    /// its key has been sent: in rounds, as their turns come (see
    /// ``RemoteWriteOrder/waitForSomeTurns(_:)``). A round goes in one round trip per
    /// ``maximumBatchWrite`` values when the tier is ``RemoteCacheBatchWriting``, else one call per
    /// value, side by side. Without a concurrent change of its keys, a batch is one round.
    func sendValues(_ writes: [(ticket: RemoteWriteOrder.Ticket, value: Value)], ttl: Duration?) async {
        precondition(Set(writes.map(\.ticket.key)).count == writes.count, "one change per key in a batch")
        var pending = writes
        while !pending.isEmpty {
            let served = Set(await order.waitForSomeTurns(pending.map(\.ticket)).map(\.key))
            let round = pending.filter { served.contains($0.ticket.key) }
            pending.removeAll { served.contains($0.ticket.key) }
            guard let batchWriting, round.count > 1 else {
                await withTaskGroup(of: Void.self) { group in
                    for write in round {
                        group.addTask {
                            await self.sendInTurn(.set(write.value, ttl: ttl), forKey: write.ticket.key)
                            self.order.finish(write.ticket)
                        }
                    }
                }
                continue
            }
            for start in stride(from: 0, to: round.count, by: Self.maximumBatchWrite) {
                let chunk = round[start..<min(start + Self.maximumBatchWrite, round.count)]
                do {
                    try await batchWriting.setValues(chunk.map { ($0.ticket.key, $0.value) }, ttl: ttl)
                    state.withLock { state in
                        for write in chunk { state.didSend(write.ticket.key) }
                    }
                    recordSuccess()
                } catch {
                    state.withLock { state in
                        for write in chunk { state.markStale(write.ticket.key) }
                    }
                    recordFailure(error, while: "writing \(chunk.count) keys")
                }
                for write in chunk { order.finish(write.ticket) }
            }
        }
    }

    /// Sends `change` of `key`, whose turn it is.
    @discardableResult
    private func sendInTurn(_ change: Change, forKey key: String) async -> Bool {
        do {
            var held = false
            switch change {
            case .set(let value, let ttl):
                try await tier.setValue(value, forKey: key, ttl: ttl)
            case .remove:
                held = try await tier.removeValue(forKey: key)
            }
            state.withLock { $0.didSend(key) }
            recordSuccess()
            return held
        } catch {
            markStale(key)
            recordFailure(error, while: change.isRemoval ? "removing \(key)" : "writing \(key)")
            return false
        }
    }

    /// Inserts `value` where the remote tier holds none, once every earlier change of its key has
    /// been sent (so that an insertion never passes a write that came before it).
    ///
    /// - Returns: Whether the tier stored it.
    /// - Throws: ``StashError/Code/remoteFailed`` when the tier cannot insert atomically or fails;
    ///   the failure is logged as an outage too. Nothing is marked stale: nothing changed.
    func insert(_ value: Value, ttl: Duration?, ticket: RemoteWriteOrder.Ticket) async throws(StashError) -> Bool {
        await order.waitForTurn(ticket)
        defer { order.finish(ticket) }
        let key = ticket.key
        guard let inserting else {
            throw StashError(.remoteFailed, "the remote tier \(type(of: tier)) cannot insert atomically (RemoteCacheInserting)")
        }
        do {
            let inserted = try await inserting.insertValue(value, forKey: key, ttl: ttl)
            // As for a change sent while the subscription is lost (see `State.didSend`).
            if inserted { state.withLock { if $0.subscriptionDown { $0.markStale(key) } } }
            recordSuccess()
            return inserted
        } catch {
            recordFailure(error, while: "inserting \(key)")
            throw StashError(.remoteFailed, "the remote tier could not insert \(key)", cause: error)
        }
    }

    /// ``send(_:ticket:)`` in a background task of the cache's, for the synchronous API; past
    /// ``maximumPendingSends`` sends under way, the key is marked stale instead (in its order).
    func sendInBackground(_ change: Change, ticket: RemoteWriteOrder.Ticket) {
        guard admitBackgroundSends(of: [ticket]) == 1 else { return }
        background.start {
            await self.send(change, ticket: ticket)
            self.endBackgroundSends(1)
        }
    }

    /// ``sendValues(_:ttl:)`` in a background task of the cache's, for loads; each value counts
    /// toward ``maximumPendingSends``, and those past it are not sent (their keys marked stale).
    func sendValuesInBackground(_ writes: [(ticket: RemoteWriteOrder.Ticket, value: Value)], ttl: Duration?) {
        let admitted = admitBackgroundSends(of: writes.map(\.ticket))
        guard admitted > 0 else { return }
        let sent = Array(writes.prefix(admitted))
        background.start {
            await self.sendValues(sent, ttl: ttl)
            self.endBackgroundSends(admitted)
        }
    }

    /// Counts as many sends of `tickets` starting in the background as ``maximumPendingSends``
    /// allows, and gives up the others (from the end), marking their keys stale in their order.
    ///
    /// - Returns: How many of `tickets`, from the first, may be sent.
    private func admitBackgroundSends(of tickets: [RemoteWriteOrder.Ticket]) -> Int {
        let (admitted, overflowStarts): (Int, Bool) = state.withLock { state in
            let admitted = min(tickets.count, max(0, state.maximumPendingSends - state.pendingSends))
            state.pendingSends += admitted
            guard admitted < tickets.count else { return (admitted, false) }
            defer { state.overflowing = true }
            return (admitted, !state.overflowing)
        }
        guard admitted < tickets.count else { return admitted }
        if overflowStarts {
            logger.warning(
                "the remote cache tier is slower than the writes: changes past the limit are not sent; their keys are removed from the remote tier once it keeps up",
                metadata: ["pending": "\(maximumPendingSends)"])
        }
        for ticket in tickets[admitted...] {
            order.abandon(ticket) { [self] in
                markStale(ticket.key)
                repairStaleKeys()
            }
        }
        return admitted
    }

    private func endBackgroundSends(_ count: Int) {
        state.withLock { state in
            state.pendingSends -= count
            if state.pendingSends == 0 { state.overflowing = false }
        }
    }

    /// Empties the remote tier's namespace; on failure, distrusts all of it until a later one succeeds.
    ///
    /// - Returns: Whether it succeeded.
    @discardableResult
    func removeAll() async -> Bool {
        do {
            try await tier.removeAll()
            state.withLock { state in
                state.staleKeys.removeAll()
                state.everythingStale = false
            }
            recordSuccess()
            return true
        } catch {
            state.withLock { $0.everythingStale = true }
            recordFailure(error, while: "removing every key")
            return false
        }
    }

    /// The keys whose local copies an invalidation of everything keeps: the
    /// stale ones and those with a change on its way to the remote tier (whose
    /// shared copy is older than the local one until it lands); `nil` when the
    /// whole remote tier is distrusted (nothing needs keeping: nothing is read
    /// from it). Exact only while every stripe lock is held.
    var keysToKeepLocally: Set<String>? {
        let stale: Set<String>? = state.withLock { $0.everythingStale ? nil : Set($0.staleKeys.keys) }
        return stale?.union(order.keysInFlight)
    }

    /// Whether any key is marked stale, or the whole tier distrusted (for tests).
    var hasStaleKeys: Bool {
        state.withLock { $0.everythingStale || !$0.staleKeys.isEmpty }
    }

    private func markStale(_ key: String) {
        state.withLock { $0.markStale(key) }
    }

    // MARK: - Outages

    func recordSuccess() {
        // While the subscription is lost, calls that succeed do not end the outage: its return does.
        if !state.withLock({ $0.subscriptionDown }) { endOutage() }
        let needsRepair = state.withLock { state in
            !state.repairing && (state.everythingStale || !state.staleKeys.isEmpty)
        }
        if needsRepair { repairStaleKeys() }
    }

    /// Ends the outage under way, if its last failure is a quiet period old.
    private func endOutage() {
        outages.recordSuccess { _ in "the remote cache tier answers again; sharing resumed" }
    }

    func recordFailure(_ error: any Error, while operation: String) {
        outages.recordFailure(
            "the remote cache tier failed; the local tiers keep serving and taking writes until it answers again",
            metadata: ["operation": "\(operation)", "error": "\(error)"])
    }

    /// Removes the stale keys from the remote tier (telling the other instances),
    /// or everything when the whole tier is distrusted; one repair at a time.
    ///
    /// A key stays marked until its removal succeeded, so that it is never read
    /// from the remote tier meanwhile.
    ///
    /// Keys marked while a repair runs are repaired by another pass when it ends (unless it failed:
    /// the next success starts one), so that no mark is left for a repair that already started.
    func repairStaleKeys() {
        let work: (keys: [(key: String, mark: UInt64)], everything: Bool, lastMark: UInt64)? = state.withLock { state in
            guard !state.repairing, !state.subscriptionDown,
                  state.everythingStale || !state.staleKeys.isEmpty else { return nil }
            state.repairing = true
            if state.everythingStale { return ([], true, state.staleMarks) }
            return (state.staleKeys.map { (key: $0.key, mark: $0.value) }, false, state.staleMarks)
        }
        guard let work else { return }
        background.start {
            var failed = false
            if work.everything {
                failed = !(await self.removeAll())
            } else {
                for (key, mark) in work.keys {
                    // In the key's order: a change sent meanwhile has already made the shared copy current.
                    let ticket = self.order.enqueue(key)
                    await self.order.waitForTurn(ticket)
                    defer { self.order.finish(ticket) }
                    let (current, down) = self.state.withLock { ($0.staleKeys[key] == mark, $0.subscriptionDown) }
                    if down { break }  // resumed by the subscription's return (see repairStaleKeys)
                    guard current else { continue }
                    do {
                        try await self.tier.removeValue(forKey: key)
                    } catch {
                        self.recordFailure(error, while: "removing stale keys")
                        failed = true
                        break
                    }
                    self.state.withLock { state in
                        if state.staleKeys[key] == mark { state.staleKeys[key] = nil }
                    }
                    self.recordSuccess()
                }
            }
            let again = self.state.withLock { state in
                state.repairing = false
                return !failed && !state.subscriptionDown
                    && (state.everythingStale || state.staleKeys.values.contains { $0 > work.lastMark })
            }
            if again { self.repairStaleKeys() }
        }
    }

    // MARK: - Invalidations

    /// Subscribes in the background, retrying with backoff until the tier accepts. A tier that is
    /// not ``RemoteCacheInvalidating`` has nothing to subscribe to: the link counts as subscribed.
    func startReceivingInvalidations(_ handler: @escaping @Sendable (RemoteInvalidation) -> Void) {
        guard let invalidating else { return didSubscribe() }
        let task = Task {
            var delay = Duration.milliseconds(50)
            var loggedFailure = false
            while !Task.isCancelled {
                do {
                    try await invalidating.startReceivingInvalidations(handler)
                    self.didSubscribe()
                    return
                } catch {
                    if !loggedFailure {
                        loggedFailure = true
                        self.logger.warning(
                            "could not subscribe to the remote cache tier's invalidations; retrying in the background",
                            metadata: ["error": "\(error)"])
                    }
                    try? await Task.sleep(for: delay)
                    delay = min(delay * 2, .seconds(5))
                }
            }
        }
        state.withLock { $0.subscriptionTask = task }
    }

    private func didSubscribe() {
        let (waiters, stopped) = state.withLock { state in
            state.subscribed = true
            return (state.subscriptionWaiters.takeAll(), state.stopped && !state.closing)
        }
        for waiter in waiters { waiter.resume() }
        if stopped, let invalidating {
            Task { await invalidating.stopReceivingInvalidations() }
        }
    }

    /// Notes that the subscription dropped: repairs wait until ``subscriptionRestored(after:)``.
    /// A failure of the outage log: the outage the calls' failures start, if they fail too (a
    /// restart of the store), else one of its own.
    func subscriptionLost() {
        state.withLock { state in
            state.subscriptionDown = true
            state.subscriptionLosses += 1
        }
        outages.recordFailure(
            "the remote cache tier's invalidation subscription is lost; other instances' changes are not heard until it is back, then every local copy they may have changed is dropped")
    }

    /// The number of the latest loss of the subscription, taken when its return is heard.
    var subscriptionLosses: UInt64 { state.withLock { $0.subscriptionLosses } }

    /// Notes that the return of the subscription heard after loss number `losses` has been
    /// applied (the local tiers dropped what they had to), then repairs the stale keys.
    /// Does not end a later loss.
    func subscriptionRestored(after losses: UInt64) {
        let restored = state.withLock { state in
            if state.subscriptionLosses == losses { state.subscriptionDown = false }
            return !state.subscriptionDown
        }
        if restored { endOutage() }
        repairStaleKeys()
    }

    /// Whether the subscription is lost and its return not yet applied (for tests).
    var isSubscriptionDown: Bool { state.withLock { $0.subscriptionDown } }

    /// Returns once the subscription is made, or the link stopped, or the task is cancelled.
    func waitUntilSubscribed() async {
        await state.wait(on: \.subscriptionWaiters) { $0.subscribed || $0.stopped }
    }

    /// Lets every ``waitUntilSubscribed()`` return.
    private func releaseSubscriptionWaiters() {
        let waiters = state.withLock { $0.subscriptionWaiters.takeAll() }
        for waiter in waiters { waiter.resume() }
    }

    /// Stops subscribing and waits until the tier has stopped: for the cache's `close`. Only the
    /// first call stops anything.
    func close() async {
        let (task, first) = state.withLock { state in
            defer {
                state.stopped = true
                state.closing = true
            }
            return (state.subscriptionTask, !state.closing)
        }
        guard first else { return }
        releaseSubscriptionWaiters()
        task?.cancel()
        await task?.value
        // A subscription made meanwhile left the stop to this call (see `didSubscribe`).
        let subscribed = state.withLock { state in
            defer { state.subscribed = false }
            return state.subscribed
        }
        if subscribed { await invalidating?.stopReceivingInvalidations() }
    }

    /// The number of keys whose shared copy is older than the local one, or `nil` when the whole
    /// remote tier is distrusted: what a shutdown leaves unrepaired.
    var staleKeyCount: Int? {
        state.withLock { $0.everythingStale ? nil : $0.staleKeys.count }
    }

    /// Stops subscribing (in the background: called from the cache's `deinit`).
    func stop() {
        let (task, subscribed) = state.withLock { state in
            state.stopped = true
            // Issued once: a later `stop` or `close` finds it done.
            defer { if !state.closing { state.subscribed = false } }
            return (state.subscriptionTask, state.subscribed && !state.closing)
        }
        releaseSubscriptionWaiters()
        task?.cancel()
        if subscribed, let invalidating {
            Task { await invalidating.stopReceivingInvalidations() }
        }
    }

    /// Called after an invalidation has been applied to the local tiers (a test hook).
    var invalidationObserver: (@Sendable (RemoteInvalidation) -> Void)? {
        get { state.withLock { $0.invalidationObserver } }
        set { state.withLock { $0.invalidationObserver = newValue } }
    }

    func didApply(_ invalidation: RemoteInvalidation) {
        invalidationObserver?(invalidation)
    }
}

extension RemoteTierLink.Change {
    var isRemoval: Bool {
        if case .remove = self { return true }
        return false
    }
}
