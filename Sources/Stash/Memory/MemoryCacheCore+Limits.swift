import Dispatch

extension MemoryCacheCore {
    // MARK: - Limits

    var countLimit: Int {
        get { lock.withLock { table.countLimit } }
        set {
            let limit = Self.validatedLimit(newValue, "countLimit", logger)
            withLockedTable { table, evicted in
                table.countLimit = limit
                table.trimToLimits(into: &evicted)
            }
        }
    }

    var costLimit: Int {
        get { lock.withLock { table.costLimit } }
        set {
            let limit = Self.validatedLimit(newValue, "costLimit", logger)
            withLockedTable { table, evicted in
                table.costLimit = limit
                table.trimToLimits(into: &evicted)
            }
        }
    }

    /// Setting a lower limit sweeps the entries it makes expired, in locked batches.
    var ageLimit: Duration? {
        get {
            let nanos = lock.withLock { table.ageLimit }
            return nanos == .max ? nil : .nanoseconds(nanos)
        }
        set {
            let nanos = Self.validatedAge(newValue, logger)
            let lowered = lock.withLock {
                // Readers check the age limit under their stripe lock only.
                defer { table.withAllStripesLocked { table.ageLimit = nanos } }
                return nanos < table.ageLimit
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
        withLockedTable { table, evicted in
            table.trim(toCount: Swift.max(maxCount, 0), into: &evicted)
        }
    }

    func trim(toCost maxCost: Int) {
        withLockedTable { table, evicted in
            table.trim(toCost: Swift.max(maxCost, 0), into: &evicted)
        }
    }

    func trimCostliest(toCost maxCost: Int) {
        withLockedTable { table, evicted in
            table.trimCostliest(toCost: Swift.max(maxCost, 0), into: &evicted)
        }
    }

    /// Removes stale entries and those written `age` or longer ago, in locked batches.
    func trim(toAge age: Duration) {
        let maxAge = Swift.max(age.nanosecondsClamped, 0)
        let now = table.clock.nanosecondsNow
        sweep { table, slot in
            if let stale = table.staleReason(slot, now: now) { return stale }
            return table.age(of: slot, now: now) >= maxAge ? .expired : nil
        }
    }
}

/// One serial, low-priority queue for every memory cache's auto-trim timer.
private let sharedAutoTrimQueue = DispatchQueue(label: "Stash.MemoryCache.autoTrim", qos: .utility)
