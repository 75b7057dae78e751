/// What a read tried on the caller's thread did (``DiskCache``'s async reads, and ``Cache``'s
/// reads below memory, try one before hopping to the disk queue): done, or in need of the queue.
///
/// Thread-safety: a value type.
enum DiskCallerThreadRead<Found> {
    /// The read is done: what it found, or `nil` for a miss.
    case done(Found?)
    /// The read needs the cache's I/O queue.
    case needsIOQueue
}
