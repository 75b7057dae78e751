/// A fixed set of locks, one chosen per key by its hash, so that operations on
/// the same key are ordered without one lock for the whole cache.
///
/// Each stripe also counts the changes made under it (its generation): a
/// writer bumps it with ``withChange(for:_:)``, and a reader that fetched a
/// value without the lock (from a remote tier) promotes it with
/// ``withLock(for:ifUnchangedSince:_:)`` only if no write, removal or
/// invalidation of a key of that stripe happened meanwhile, so a slow read can
/// never put an older value over a newer write.
///
/// A stripe also holds the keys whose invalidation is under way: dropped from
/// memory at once, still on disk until the disk tier's queue gets to them.
/// Reads skip the disk for those keys (``withLockUnlessInvalidating(for:_:)``),
/// so that no caller reads the old value from disk meanwhile.
///
/// Thread-safety: every member may be called from any thread.
final class KeyStripes: Sendable {
    /// A lock and the count of changes made while holding it.
    private final class Stripe: @unchecked Sendable {
        // @unchecked Sendable: `generation` and `invalidating` are only read or written with
        // `lock` held. A lock of its own rather than a LockedValue: readers on the caller's
        // thread take it with `tryLock()`, which LockedValue does not offer.
        let lock = Lock()
        var generation: UInt64 = 0
        /// Each key whose invalidation has begun and not ended, with how many have (usually 1).
        var invalidating: [String: Int] = [:]
    }

    private let stripes: [Stripe]

    init(count: Int = 32) {
        stripes = (0..<count).map { _ in Stripe() }
    }

    private func stripe(for key: String) -> Stripe {
        stripes[stripeIndex(for: key)]
    }

    private func stripeIndex(for key: String) -> Int {
        Int(UInt(bitPattern: key.hashValue) % UInt(stripes.count))
    }

    /// Runs `body` holding `key`'s stripe lock.
    func withLock<Result>(for key: String, _ body: () throws(StashError) -> Result) throws(StashError) -> Result {
        let stripe = stripe(for: key)
        stripe.lock.lock()
        defer { stripe.lock.unlock() }
        return try body()
    }

    /// Runs `body`, a write or removal of `key`, holding its stripe lock, and
    /// counts it as a change of the stripe.
    func withChange<Result>(for key: String, _ body: () throws(StashError) -> Result) throws(StashError) -> Result {
        let stripe = stripe(for: key)
        stripe.lock.lock()
        defer { stripe.lock.unlock() }
        stripe.generation &+= 1
        return try body()
    }

    /// Runs `body` holding `key`'s stripe lock, unless an invalidation of `key` is under way
    /// (between ``beginInvalidation(of:_:)`` and ``endInvalidation(of:_:)``): then returns `nil`
    /// without running it. For reads of the disk tier.
    func withLockUnlessInvalidating<Result>(
        for key: String, _ body: () throws(StashError) -> Result?
    ) throws(StashError) -> Result? {
        let stripe = stripe(for: key)
        stripe.lock.lock()
        defer { stripe.lock.unlock() }
        guard stripe.invalidating.isEmpty || stripe.invalidating[key] == nil else { return nil }
        return try body()
    }

    /// ``withLockUnlessInvalidating(for:_:)`` without waiting: runs `body` only if `key`'s stripe
    /// lock is free and no invalidation of `key` is under way, and returns `nil` otherwise. For a
    /// read of the disk tier on a thread that must not block on a writer (the cooperative pool).
    func withLockIfFreeUnlessInvalidating<Result>(
        for key: String, _ body: () throws(StashError) -> Result?
    ) throws(StashError) -> Result? {
        let stripe = stripe(for: key)
        guard stripe.lock.tryLock() else { return nil }
        defer { stripe.lock.unlock() }
        guard stripe.invalidating.isEmpty || stripe.invalidating[key] == nil else { return nil }
        return try body()
    }

    /// Begins an invalidation of `key`: counts a change of its stripe, marks the key, and runs
    /// `body` (dropping it from memory) holding the stripe lock. Every call is followed by one
    /// ``endInvalidation(of:_:)``.
    func beginInvalidation(of key: String, _ body: () -> Void) {
        let stripe = stripe(for: key)
        stripe.lock.lock()
        defer { stripe.lock.unlock() }
        stripe.generation &+= 1
        stripe.invalidating[key, default: 0] += 1
        body()
    }

    /// Ends an invalidation of `key`: runs `body` (dropping it from disk) holding the stripe lock,
    /// counted as a change of the stripe, then unmarks the key, also when `body` throws.
    func endInvalidation(of key: String, _ body: () throws(StashError) -> Void) throws(StashError) {
        let stripe = stripe(for: key)
        stripe.lock.lock()
        defer {
            if let count = stripe.invalidating[key] {
                stripe.invalidating[key] = count > 1 ? count - 1 : nil
            }
            stripe.lock.unlock()
        }
        stripe.generation &+= 1
        try body()
    }

    /// The number of changes of `key`'s stripe so far.
    func generation(for key: String) -> UInt64 {
        let stripe = stripe(for: key)
        stripe.lock.lock()
        defer { stripe.lock.unlock() }
        return stripe.generation
    }

    /// Runs `body` holding `key`'s stripe lock if the stripe has not changed
    /// since ``generation(for:)`` returned `generation`; returns `nil` otherwise.
    func withLock<Result>(
        for key: String, ifUnchangedSince generation: UInt64, _ body: () throws(StashError) -> Result
    ) throws(StashError) -> Result? {
        let stripe = stripe(for: key)
        stripe.lock.lock()
        defer { stripe.lock.unlock() }
        guard stripe.generation == generation else { return nil }
        return try body()
    }

    /// Counts a change of every stripe (a `removeAll`).
    func changeAll() {
        for stripe in stripes {
            stripe.lock.lock()
            stripe.generation &+= 1
            stripe.lock.unlock()
        }
    }

    /// Runs `body`, a write of every key of `keys`, holding each key's stripe lock, and counts it
    /// as a change of each of those stripes. The locks are taken in the stripes' order, as
    /// ``withEveryLock(_:)`` takes them, and every other member takes one lock at a time, so
    /// no two callers wait for each other in a cycle.
    func withChanges<Result>(for keys: some Sequence<String>, _ body: () throws(StashError) -> Result) throws(StashError) -> Result {
        let indices = Set(keys.map(stripeIndex(for:))).sorted()
        for index in indices {
            stripes[index].lock.lock()
            stripes[index].generation &+= 1
        }
        defer {
            for index in indices.reversed() { stripes[index].lock.unlock() }
        }
        return try body()
    }

    /// Runs `body` holding every stripe's lock (taken in order) and counts it as
    /// a change of every stripe: no write, removal or promotion of any key runs
    /// meanwhile. For rare whole-cache changes (an invalidation of everything).
    func withEveryLock<Result>(_ body: () throws(StashError) -> Result) throws(StashError) -> Result {
        for stripe in stripes {
            stripe.lock.lock()
            stripe.generation &+= 1
        }
        defer {
            for stripe in stripes.reversed() { stripe.lock.unlock() }
        }
        return try body()
    }
}
