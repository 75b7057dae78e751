/// The ticket of each load under way, by key (see ``LoadingTarget``): a load
/// stores its value only while its ticket holds, and every write, removal or
/// invalidation of the key voids it.
///
/// Not thread-safe: its owner keeps it under the lock that orders the key's
/// writes. Empty when no load is under way, so a write pays one branch.
@usableFromInline
struct LoadTickets<Key: Hashable> {
    @usableFromInline var tickets: [Key: UInt64] = [:]
    var last: UInt64 = 0

    init() {}

    /// Takes a new ticket for a load of `key`, replacing any older one.
    mutating func issue(_ key: Key) -> UInt64 {
        last &+= 1
        tickets[key] = last
        return last
    }

    /// Whether `ticket` still holds for `key`; forgets it either way.
    mutating func redeem(_ ticket: UInt64, for key: Key) -> Bool {
        guard tickets[key] == ticket else { return false }
        tickets.removeValue(forKey: key)
        return true
    }

    /// Forgets `ticket` if it is still `key`'s, for a failed load.
    mutating func forget(_ ticket: UInt64, for key: Key) {
        if tickets[key] == ticket { tickets.removeValue(forKey: key) }
    }

    /// Voids `key`'s ticket: a load under way will not store its value.
    @inlinable
    mutating func void(_ key: Key) {
        if !tickets.isEmpty { tickets.removeValue(forKey: key) }
    }

    /// Voids every ticket.
    mutating func voidAll() {
        tickets.removeAll()
    }
}
