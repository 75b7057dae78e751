/// Tunables of a ``KVStorage``. Every property has a default suited to a cache.
struct KVStorageOptions: Sendable {
    /// How long SQLite retries when another connection or process holds the
    /// database lock, before the operation fails with
    /// ``StashError/Code/databaseFailed``. Default: 5 seconds.
    var busyTimeout: Duration = .seconds(5)

    /// Whether writes are made durable before they are acknowledged. Default: `false`.
    ///
    /// When `false` (a cache's usual trade-off), a file value is not `fsync`ed and
    /// SQLite runs with `synchronous = NORMAL`: a power loss can lose the most
    /// recent writes, but a process crash never yields torn bytes, because a row is
    /// committed only after its file was completely written and closed; a reader
    /// also checks the file's size against the row.
    /// When `true`, each file and the `data/` directory are `fsync`ed before the
    /// row is committed, and SQLite runs with `synchronous = FULL`.
    var synchronous = false

    /// How many reads may accumulate unflushed last-access times before a read
    /// flushes them itself. Default: 1,024. The owner normally flushes earlier with
    /// ``KVStorage/flushAccessTimes()``.
    var accessFlushThreshold = 1024

    /// How much later than the access time a row records a read must be to be
    /// recorded, but for the entry's first read since its write, which always is.
    /// Default: 1 second. Recording every read made the writes of access times
    /// over half the cost of a read, and the reason reads did not scale with
    /// threads (they are written under the owner's lock; issue #26); LRU order to
    /// the second is all a disk cache's trims need. 0 records every read.
    var accessTimeResolution: Duration = .seconds(1)

    /// How old (by the file's modification time, on the wall clock) a file in
    /// `data/` must be before ``KVStorage/checkConsistency()`` treats it as an
    /// orphan. Protects another process's file that is still being written or whose
    /// row is not yet committed. Default: 1 hour.
    var orphanGracePeriod: Duration = .seconds(3600)

    /// How many rows one trim transaction removes before releasing the write lock
    /// to other connections. Default: 256.
    var trimBatchSize = 256

    /// Whether opening creates what is missing: the directory, `trash/`, `data/`
    /// and the manifest. Default: `true`. Off for the consistency check of an
    /// existing cache, so that a check racing the deletion of the cache's
    /// directory fails instead of creating it again (which made the deletion fail).
    var createsMissing = true
}
