/// A per-slot field that most caches never use, stored beside the arena rather
/// than in every entry, and allocated only when the first entry needs a value
/// other than the default.
///
/// So a cache whose entries all cost 0 and have no time to live pays nothing
/// for costs and expiry times: the same idea as Caffeine generating a node
/// class per combination of features. Not thread-safe: the storage's lock guards it.
@usableFromInline
struct SlotColumn<Element: BitwiseCopyable & Equatable> {
    @usableFromInline var values: UnsafeMutablePointer<Element>?
    @usableFromInline let defaultValue: Element
    @usableFromInline var capacity: Int = 0

    @inlinable
    init(defaultValue: Element) {
        self.defaultValue = defaultValue
    }

    /// The value at `slot`, or the default while the column does not exist.
    @inlinable
    subscript(slot: Int32) -> Element {
        values?[Int(slot)] ?? defaultValue
    }

    /// Stores `value` at `slot`, creating the column (for `arenaCapacity`
    /// slots) the first time a value other than the default arrives.
    @inlinable
    mutating func set(_ value: Element, at slot: Int32, arenaCapacity: Int) {
        if let values {
            values[Int(slot)] = value
        } else if value != defaultValue {
            allocate(arenaCapacity)
            values![Int(slot)] = value
        }
    }

    /// Stores `value` at `slot` of a column that exists, writing only through
    /// the buffer: not a mutation of the column itself, so a reader that reads
    /// other slots at the same time does not race with it.
    @inlinable
    func store(_ value: Element, at slot: Int32) {
        values.unsafelyUnwrapped[Int(slot)] = value
    }

    @usableFromInline
    mutating func allocate(_ arenaCapacity: Int) {
        let created = UnsafeMutablePointer<Element>.allocate(capacity: arenaCapacity)
        created.initialize(repeating: defaultValue, count: arenaCapacity)
        values = created
        capacity = arenaCapacity
    }

    /// Follows the arena to `newCapacity` slots, if the column exists.
    mutating func grow(to newCapacity: Int) {
        guard let old = values, newCapacity > capacity else { return }
        values = old.movedToNewBuffer(count: capacity, capacity: newCapacity, filling: defaultValue)
        capacity = newCapacity
    }

    /// Frees the column; every slot reads as the default again.
    mutating func removeAll() {
        values?.deallocate()
        values = nil
        capacity = 0
    }
}
