/// A value whose memory can be given back while it sits in a cache: the
/// portable counterpart of Foundation's `NSDiscardableContent`, which Linux
/// Foundation does not have.
///
/// A ``MemoryCache`` treats a value whose ``isContentDiscarded`` is true as a
/// miss: it evicts the entry with reason ``EvictionReason/discarded``, as
/// `NSCache` does when `evictsObjectsWithDiscardedContent` is set. Under memory
/// pressure, when ``MemoryCache/removesAllOnMemoryPressure`` is false, the
/// cache calls ``discardContentIfPossible()`` on every such value instead of
/// removing it.
///
/// The cache checks conformance on the static type of its values: declare the
/// cache as `MemoryCache<Key, MyDiscardableClass>`, not over an existential.
///
/// Conformers must be thread-safe: the cache calls these members from any thread.
public protocol DiscardableContent: AnyObject, Sendable {
    /// Marks the content as in use so it is not discarded. Returns false if the
    /// content was already discarded. Calls nest.
    func beginContentAccess() -> Bool
    /// Ends one ``beginContentAccess()``. Content may be discarded once every
    /// access has ended.
    func endContentAccess()
    /// Discards the content if no access is in progress.
    func discardContentIfPossible()
    /// Whether the content has been discarded.
    var isContentDiscarded: Bool { get }
}
