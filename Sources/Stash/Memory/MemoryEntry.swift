/// One entry in the arena. Its cost and expiry time live in ``SlotColumn``s
/// beside the arena, which exist only once some entry needs them.
@usableFromInline
struct MemoryEntry<Key, Value> {
    @usableFromInline var key: Key
    @usableFromInline var value: Value
    /// When the value was last written, in clock nanoseconds. Ages count from here.
    @usableFromInline var writeTime: Int64

    @inlinable
    init(key: Key, value: Value, writeTime: Int64) {
        self.key = key
        self.value = value
        self.writeTime = writeTime
    }
}
