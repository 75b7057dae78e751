/// The limits a workload gives every contender. Contenders without limits (the
/// floor) ignore them.
public struct CacheLimits: Sendable, Codable, Hashable {
    public var countLimit: Int
    public var costLimit: Int

    public init(countLimit: Int, costLimit: Int) {
        self.countLimit = countLimit
        self.costLimit = costLimit
    }
}

/// The eviction policies Stash's `MemoryCache` offers, named here so that the
/// benchmark's own code does not depend on the library's spelling.
public enum PolicyName: String, Sendable, Codable, CaseIterable {
    case lru = "LRU", fifo = "FIFO", lfu = "LFU", s3fifo = "S3-FIFO"
}

/// What a memory workload drives: a cache from `String` keys to `Int` values.
///
/// Workloads address keys by index into a key table built before timing starts;
/// each contender turns that table into its own representation once
/// (``prepareKeys(_:)``), so that no timed region builds a key: `NSCache` gets
/// `NSString` objects and pre-boxed values, the Swift caches the `String`s.
/// The value stored for key `i` is always `i`.
///
/// Workloads are generic over the contender, so in a release build each
/// contender's calls are specialized and nothing is paid for dispatch.
public protocol CacheUnderTest: AnyObject, Sendable {
    associatedtype PreparedKeys: Sendable
    static var displayName: String { get }
    static func prepareKeys(_ keys: [String]) -> PreparedKeys
    init(limits: CacheLimits, policy: PolicyName, keys: PreparedKeys)
    /// The value for key `index`, or nil.
    func get(_ index: Int) -> Int?
    /// Stores value `index` for key `index`.
    func set(_ index: Int, cost: Int)
}

/// The contenders of the memory section, in the order tables show them.
public enum ContenderKind: Hashable, Sendable, Codable, CustomStringConvertible {
    case stash(PolicyName)
    case nsCache
    case lockedDictionary

    public static var all: [ContenderKind] {
        [.stash(.lru), .stash(.fifo), .stash(.lfu), .stash(.s3fifo), .nsCache, .lockedDictionary]
    }

    public var description: String {
        switch self {
        case .stash(let policy): "MemoryCache \(policy.rawValue)"
        case .nsCache: "NSCache"
        case .lockedDictionary: "Dictionary+lock"
        }
    }

    /// A short name for narrow columns.
    public var shortName: String {
        switch self {
        case .stash(let policy): policy.rawValue
        case .nsCache: "NSCache"
        case .lockedDictionary: "Dict"
        }
    }

    public var isFloor: Bool { self == .lockedDictionary }

    var policy: PolicyName {
        if case .stash(let policy) = self { return policy }
        return .lru
    }
}

/// Something to do with a contender type: the way to call generic workload code
/// with the concrete type, so that it is specialized.
public protocol ContenderVisitor {
    associatedtype Result
    func visit<C: CacheUnderTest>(_ type: C.Type, policy: PolicyName) -> Result
}

extension ContenderKind {
    public func accept<V: ContenderVisitor>(_ visitor: V) -> V.Result {
        switch self {
        case .stash(let policy): visitor.visit(StashMemoryCacheContender.self, policy: policy)
        case .nsCache: visitor.visit(NSCacheContender.self, policy: .lru)
        case .lockedDictionary: visitor.visit(LockedDictionaryContender.self, policy: .lru)
        }
    }
}
