import Dispatch

extension MemoryCacheCore {
    // MARK: - Limits

    var countLimit: Int {
        get { lock.withLock { storage.countLimit } }
        set {
            let limit = Self.validatedLimit(newValue, "countLimit", logger)
            withLockedStorage { storage, evicted in
                storage.countLimit = limit
                storage.trimToLimits(into: &evicted)
            }
        }
    }

    var costLimit: Int {
        get { lock.withLock { storage.costLimit } }
        set {
            let limit = Self.validatedLimit(newValue, "costLimit", logger)
            withLockedStorage { storage, evicted in
                storage.costLimit = limit
                storage.trimToLimits(into: &evicted)
            }
        }
    }

    /// Setting a lower limit sweeps the entries it makes expired, in locked batches.
    var ageLimit: Duration? {
        get {
            let nanos = lock.withLock { storage.ageLimit }
            return nanos == .max ? nil : .nanoseconds(nanos)
        }
        set {
            let nanos = Self.validatedAge(newValue, logger)
            let lowered = lock.withLock {
                defer { storage.ageLimit = nanos }
                return nanos < storage.ageLimit
            }
            if lowered {
                removeStaleEntries()
            }
        }
    }

    var autoTrimInterval: Duration? {
        get { lock.withLock { _autoTrimTimer.interval } }
        set {
            let interval = AutoTrimTimer.validated(newValue, logger: logger)
            lock.withLock {
                _autoTrimTimer.reschedule(every: interval, on: sharedAutoTrimQueue, owner: self) {
                    $0.removeStaleEntries()
                }
            }
        }
    }

    // MARK: - Trimming

    func trim(toCount maxCount: Int) {
        withLockedStorage { storage, evicted in
            storage.trim(toCount: Swift.max(maxCount, 0), into: &evicted)
        }
    }

    func trim(toCost maxCost: Int) {
        withLockedStorage { storage, evicted in
            storage.trim(toCost: Swift.max(maxCost, 0), into: &evicted)
        }
    }

    func trimCostliest(toCost maxCost: Int) {
        withLockedStorage { storage, evicted in
            storage.trimCostliest(toCost: Swift.max(maxCost, 0), into: &evicted)
        }
    }

    /// Removes stale entries and those written `age` or longer ago, in locked batches.
    func trim(toAge age: Duration) {
        let maxAge = Swift.max(age.nanosecondsClamped, 0)
        let now = storage.clock.nanosecondsNow
        sweep { storage, slot in
            if let stale = storage.staleReason(slot, now: now) { return stale }
            return storage.age(of: slot, now: now) >= maxAge ? .expired : nil
        }
    }
}

/// One serial, low-priority queue for every memory cache's auto-trim timer.
private let sharedAutoTrimQueue = DispatchQueue(label: "Stash.MemoryCache.autoTrim", qos: .utility)
