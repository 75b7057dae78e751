#if !canImport(Darwin)
import Synchronization
#endif

/// A growable array of bytes that readers on several threads may update at
/// once: S3-FIFO's per-slot state (use counter and queue bit).
///
/// Every access is atomic with relaxed ordering, which on x86-64 and ARM64
/// compiles to plain byte loads and stores for ``load(_:)`` and
/// ``store(_:_:)``; only ``compareExchange(_:expected:desired:)`` is a locked
/// instruction. Relaxed is enough: a counter orders nothing else, and the
/// locks around the arena publish everything else.
///
/// Growing (``grow(from:to:)``) moves the bytes to a new buffer and is not
/// atomic: the owner does it only with every reader excluded (all stripe locks held).
///
/// On Apple platforms the package's deployment targets predate
/// `Synchronization.Atomic`, so there the bytes are plain, and ``isAtomic`` is
/// false: memory caches there read under the policy lock, as before.
@usableFromInline
struct AtomicBytes {
    #if !canImport(Darwin)
    @usableFromInline var base: UnsafeMutablePointer<Atomic<UInt8>>
    #else
    @usableFromInline var base: UnsafeMutablePointer<UInt8>
    #endif

    /// Whether concurrent updates are safe on this platform.
    @inlinable static var isAtomic: Bool {
        #if !canImport(Darwin)
        true
        #else
        false
        #endif
    }

    init() {
        base = .allocate(capacity: 0)
    }

    @inlinable
    func load(_ index: Int) -> UInt8 {
        #if !canImport(Darwin)
        base[index].load(ordering: .relaxed)
        #else
        base[index]
        #endif
    }

    @inlinable
    func store(_ index: Int, _ value: UInt8) {
        #if !canImport(Darwin)
        base[index].store(value, ordering: .relaxed)
        #else
        base[index] = value
        #endif
    }

    /// Stores `desired` if the byte is `expected`; returns whether it did.
    @inlinable
    func compareExchange(_ index: Int, expected: UInt8, desired: UInt8) -> Bool {
        #if !canImport(Darwin)
        base[index].compareExchange(expected: expected, desired: desired, ordering: .relaxed).exchanged
        #else
        if base[index] == expected {
            base[index] = desired
            return true
        }
        return false
        #endif
    }

    /// Moves the first `count` bytes into a new buffer of `capacity` bytes, the
    /// rest 0. Not atomic: no other thread may touch the bytes meanwhile.
    mutating func grow(from count: Int, to capacity: Int) {
        #if !canImport(Darwin)
        let grown = UnsafeMutablePointer<Atomic<UInt8>>.allocate(capacity: capacity)
        for index in 0..<capacity {
            (grown + index).initialize(to: Atomic(index < count ? load(index) : 0))
        }
        base.deinitialize(count: count)
        base.deallocate()
        base = grown
        #else
        base = base.movedToNewBuffer(count: count, capacity: capacity, filling: 0)
        #endif
    }

    func deallocate(count: Int) {
        base.deinitialize(count: count)
        base.deallocate()
    }
}

/// S3-FIFO's per-slot state bytes, shared between the queue (which owns and
/// grows them under the policy lock) and readers (which bump the use counter
/// holding only a stripe lock).
///
/// Each byte is the use counter (bits 0–1) and whether the entry is in the
/// main queue (bit 2). Only the queue changes bit 2, and a reader only ever
/// compare-exchanges the counter up, so a race loses at most one bump or one
/// decrement, never the queue bit. Single-threaded, every bump lands, so the
/// policy behaves exactly as it did under one lock.
@usableFromInline
final class UseCounters {
    @usableFromInline static var counterMask: UInt8 { 0b11 }
    /// Grown only with every stripe lock held (the arena grows then too).
    @exclusivity(unchecked) @usableFromInline var bytes = AtomicBytes()

    init() {}

    /// Counts a read of the entry at `slot`: min(counter + 1, 3). Safe without
    /// the policy lock, from any number of threads at once; a counter already
    /// at 3, the common case for a hot key, is only read, so its cache line
    /// stays shared between cores.
    @inlinable @inline(__always)
    func bump(_ slot: Int32) {
        let old = bytes.load(Int(slot))
        if old & Self.counterMask != Self.counterMask {
            _ = bytes.compareExchange(Int(slot), expected: old, desired: old &+ 1)
        }
    }
}
