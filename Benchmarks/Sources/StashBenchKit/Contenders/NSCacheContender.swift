import Foundation

/// Foundation's `NSCache`. It needs object keys and values, so both are built
/// once per workload, before any timing (``prepareKeys(_:)``): the timed region
/// pays only for the cache itself, as a fair comparison must.
public final class NSCacheContender: CacheUnderTest, @unchecked Sendable {
    // @unchecked Sendable: NSCache is documented thread-safe; the arrays are immutable.
    public static var displayName: String { "NSCache" }

    /// A value object holding the Int a Swift cache would store inline.
    public final class Box: Sendable {
        public let value: Int
        init(_ value: Int) { self.value = value }
    }

    public struct Prepared: @unchecked Sendable {
        // @unchecked Sendable: immutable after construction; NSString is immutable.
        let keys: [NSString]
        let values: [Box]
    }

    private let cache = NSCache<NSString, Box>()
    private let keys: [NSString]
    private let values: [Box]

    public static func prepareKeys(_ keys: [String]) -> Prepared {
        Prepared(keys: keys.map { NSString(string: $0) }, values: keys.indices.map { Box($0) })
    }

    public init(limits: CacheLimits, policy: PolicyName, keys: Prepared) {
        self.keys = keys.keys
        self.values = keys.values
        // NSCache reads 0 as "no limit".
        cache.countLimit = limits.countLimit == .max ? 0 : limits.countLimit
        cache.totalCostLimit = limits.costLimit == .max ? 0 : limits.costLimit
    }

    @inline(__always)
    public func get(_ index: Int) -> Int? {
        cache.object(forKey: keys[index])?.value
    }

    @inline(__always)
    public func set(_ index: Int, cost: Int) {
        cache.setObject(values[index], forKey: keys[index], cost: cost)
    }
}
