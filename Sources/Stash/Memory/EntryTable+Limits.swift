extension EntryTable {
    /// Evicts in policy order, never `protected`, until `count` more entries
    /// and `cost` more cost fit within the limits. `cost` must be at most
    /// `costLimit`, so the comparison cannot overflow.
    @inlinable
    func makeRoom(count extra: Int, cost: Int, protecting protected: Int32, into evicted: inout EvictedEntries<Key, Value>) {
        while count > countLimit - extra || totalCost > costLimit - cost {
            let victim = queue.victim(skipping: protected)
            guard victim >= 0 else { return }
            remove(slot: victim, reason: count > countLimit - extra ? .countLimit : .costLimit, into: &evicted)
        }
    }

    /// Why a value with this cost and time to live cannot be stored at all, if it cannot.
    @inlinable
    func rejection(cost: Int, ttl: Int64?) -> EvictionReason? {
        if countLimit < 1 { return .countLimit }
        if cost > costLimit { return .costLimit }
        if let ttl, ttl <= 0 { return .expired }
        return nil
    }

    /// Evicts in eviction order until count and cost are within their limits,
    /// after a limit was lowered.
    func trimToLimits(into evicted: inout EvictedEntries<Key, Value>) {
        queue.setLimits(countLimit: countLimit, costLimit: costLimit)
        makeRoom(count: 0, cost: 0, protecting: -1, into: &evicted)
    }

    /// Evicts in eviction order until at most `maxCount` entries remain. O(removed).
    func trim(toCount maxCount: Int, into evicted: inout EvictedEntries<Key, Value>) {
        while count > maxCount {
            let victim = queue.victim(skipping: -1)
            guard victim >= 0 else { return }
            remove(slot: victim, reason: .countLimit, into: &evicted)
        }
    }

    /// Evicts in eviction order until the total cost is at most `maxCost`. O(removed).
    func trim(toCost maxCost: Int, into evicted: inout EvictedEntries<Key, Value>) {
        while totalCost > maxCost {
            let victim = queue.victim(skipping: -1)
            guard victim >= 0 else { return }
            remove(slot: victim, reason: .costLimit, into: &evicted)
        }
    }

    /// Evicts the costliest entries first until the total cost is at most `maxCost`.
    /// Among equal costs, eviction order decides. O(n log n).
    func trimCostliest(toCost maxCost: Int, into evicted: inout EvictedEntries<Key, Value>) {
        guard totalCost > maxCost else { return }
        var order: [(cost: Int, rank: Int, slot: Int32)] = []
        order.reserveCapacity(count)
        queue.forEachInEvictionOrder { slot in
            order.append((costs[slot], order.count, slot))
            return true
        }
        order.sort { $0.cost != $1.cost ? $0.cost > $1.cost : $0.rank < $1.rank }
        for candidate in order where totalCost > maxCost {
            remove(slot: candidate.slot, reason: .costLimit, into: &evicted)
        }
    }
}
