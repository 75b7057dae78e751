/// Why an entry left a cache: passed to ``MemoryCache/onEvict``, and the keys
/// of ``CacheStatistics/evictionsByReason`` for the memory and disk tiers.
///
/// A struct with static members rather than an enum, so that new reasons can
/// be added without breaking code that matches on these. Match with `==` or
/// `case .expired:` in a `switch` that has a `default:`.
public struct EvictionReason: Hashable, Sendable, CustomStringConvertible {
    @usableFromInline
    enum Kind: UInt8, Hashable, Sendable {
        case countLimit, costLimit, expired, removed, replaced, removeAll, memoryPressure, discarded, freeDiskSpace
    }

    @usableFromInline
    let kind: Kind

    @inlinable
    init(_ kind: Kind) { self.kind = kind }

    /// Evicted to keep ``MemoryCache/count`` within ``MemoryCache/countLimit``,
    /// by ``MemoryCache/trim(toCount:)``, or not stored because the count limit is 0;
    /// for a ``DiskCache``, to keep its ``DiskCache/countLimit``, or by its `trim(toCount:)`.
    public static let countLimit = EvictionReason(.countLimit)
    /// Evicted to keep ``MemoryCache/totalCost`` within ``MemoryCache/costLimit``,
    /// by a cost trim, or not stored because its cost alone exceeds the limit;
    /// for a ``DiskCache``, whose cost is the size of its values, to keep its
    /// ``DiskCache/sizeLimit``, or by its `trim(toSize:)`.
    public static let costLimit = EvictionReason(.costLimit)
    /// Its time to live or the cache's age limit ran out, or a `trim(toAge:)` or
    /// `removeExpired()` removed it.
    public static let expired = EvictionReason(.expired)
    /// Removed by ``MemoryCache/removeValue(forKey:)`` or by assigning `nil` through the subscript.
    public static let removed = EvictionReason(.removed)
    /// Its value was replaced by a new ``MemoryCache/setValue(_:forKey:cost:ttl:)`` for the same key.
    /// The callback receives the old value.
    public static let replaced = EvictionReason(.replaced)
    /// Removed by ``MemoryCache/removeAll()``.
    public static let removeAll = EvictionReason(.removeAll)
    /// Removed because the system or the app reported memory pressure, or the app entered the background.
    public static let memoryPressure = EvictionReason(.memoryPressure)
    /// The value is ``DiscardableContent`` whose content has been discarded.
    public static let discarded = EvictionReason(.discarded)
    /// Removed by a ``DiskCache`` to keep the free space of its volume above
    /// ``DiskCache/freeDiskSpaceLimit``.
    public static let freeDiskSpace = EvictionReason(.freeDiskSpace)

    /// Whether the cache chose to drop the entry (a limit, expiry, pressure or
    /// discarded content), as opposed to the caller removing or replacing it.
    /// Counted in ``CacheStatistics/evictions``.
    public var isEviction: Bool {
        switch kind {
        case .countLimit, .costLimit, .expired, .memoryPressure, .discarded, .freeDiskSpace: true
        case .removed, .replaced, .removeAll: false
        }
    }

    /// The reason's name, such as "countLimit".
    public var description: String {
        switch kind {
        case .countLimit: "countLimit"
        case .costLimit: "costLimit"
        case .expired: "expired"
        case .removed: "removed"
        case .replaced: "replaced"
        case .removeAll: "removeAll"
        case .memoryPressure: "memoryPressure"
        case .discarded: "discarded"
        case .freeDiskSpace: "freeDiskSpace"
        }
    }
}

/// Entries taken out of the cache while its lock was held, kept so that their
/// values are released, and the callback runs, after the lock is released.
///
/// The first entry is stored inline, so the common case (one replaced or
/// evicted entry per operation) allocates nothing.
@usableFromInline
struct EvictedEntries<Key, Value> {
    @usableFromInline
    typealias Element = (key: Key, value: Value, reason: EvictionReason)

    @usableFromInline
    var first: Element?
    @usableFromInline
    var rest: [Element] = []

    @inlinable
    init() {}

    @inlinable
    var isEmpty: Bool { first == nil }

    @inlinable
    var count: Int { first == nil ? 0 : 1 + rest.count }

    @inlinable
    mutating func append(key: Key, value: Value, reason: EvictionReason) {
        if first == nil {
            first = (key, value, reason)
        } else {
            rest.append((key, value, reason))
        }
    }

    @inlinable
    func forEach(_ body: (Element) -> Void) {
        guard let first else { return }
        body(first)
        rest.forEach(body)
    }
}

extension EvictedEntries: @unchecked Sendable where Key: Sendable, Value: Sendable {
    // @unchecked Sendable: a plain value holding Sendable keys and values and an
    // EvictionReason; the tuple members are what stop the compiler inferring it.
}
