/// A value read from a ``DiskCache``, with what ``Cache`` needs to promote it into memory: its
/// encoded size (the memory cost by default) and its expiration (the time to live left).
///
/// Thread-safety: a value type.
struct DiskCacheHit<Value> {
    var value: Value
    /// The encoded size in bytes.
    var size: Int
    /// When it expires, on the cache's clock, or nil for never.
    var expiration: Int64?
}
