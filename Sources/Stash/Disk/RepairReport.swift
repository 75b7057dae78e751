/// What a consistency check of a disk cache found and repaired.
///
/// Returned by the disk cache's verification (the `stash verify` command runs it
/// directly; a disk cache also runs it in the background after opening). Every
/// count is of things already repaired: the cache is consistent afterwards.
///
/// ```swift
/// let report = try cache.verify()
/// if !report.isClean { print(report) }
/// ```
///
/// A value type: `Sendable`, safe to share between threads.
public struct RepairReport: Sendable, Hashable, CustomStringConvertible {
    /// Files in `data/` that no entry referred to (left by a crash before their
    /// entry was recorded, or by a deletion that failed), older than the grace
    /// period (1 hour by default), deleted. Younger ones are left alone: another
    /// process may be about to record them.
    public var orphanFilesRemoved: Int
    /// Entries in `data/` that Stash never creates (symbolic links, directories,
    /// devices), removed without following them.
    public var unexpectedEntriesRemoved: Int
    /// Cache entries whose file was missing, removed.
    public var missingFileEntriesRemoved: Int
    /// Cache entries whose bytes were damaged (a file of the wrong size or type, an
    /// inline value of the wrong length), removed with their files.
    public var damagedEntriesRemoved: Int
    /// Whether the stored entry count or total size disagreed with the entries and
    /// was recomputed.
    public var totalsCorrected: Bool
    /// Whether the manifest failed SQLite's integrity check and was set aside: the
    /// cache was restarted empty, and the other counts are then zero.
    public var manifestReset: Bool

    /// Creates a report. Every count defaults to 0 and every flag to `false`: a
    /// clean report.
    public init(
        orphanFilesRemoved: Int = 0,
        unexpectedEntriesRemoved: Int = 0,
        missingFileEntriesRemoved: Int = 0,
        damagedEntriesRemoved: Int = 0,
        totalsCorrected: Bool = false,
        manifestReset: Bool = false
    ) {
        self.orphanFilesRemoved = orphanFilesRemoved
        self.unexpectedEntriesRemoved = unexpectedEntriesRemoved
        self.missingFileEntriesRemoved = missingFileEntriesRemoved
        self.damagedEntriesRemoved = damagedEntriesRemoved
        self.totalsCorrected = totalsCorrected
        self.manifestReset = manifestReset
    }

    /// The number of files and entries removed, in all categories.
    public var repairedCount: Int {
        orphanFilesRemoved + unexpectedEntriesRemoved
            + missingFileEntriesRemoved + damagedEntriesRemoved
    }

    /// Whether nothing needed repairing.
    public var isClean: Bool {
        repairedCount == 0 && !totalsCorrected && !manifestReset
    }

    /// A one-line English summary of what was repaired, or
    /// `"consistent: nothing to repair"`.
    public var description: String {
        if isClean { return "consistent: nothing to repair" }
        var parts: [String] = []
        if manifestReset { parts.append("manifest damaged: set aside, cache restarted empty") }
        if orphanFilesRemoved > 0 { parts.append("\(orphanFilesRemoved) orphan files removed") }
        if unexpectedEntriesRemoved > 0 { parts.append("\(unexpectedEntriesRemoved) unexpected entries removed") }
        if missingFileEntriesRemoved > 0 { parts.append("\(missingFileEntriesRemoved) entries with missing files removed") }
        if damagedEntriesRemoved > 0 { parts.append("\(damagedEntriesRemoved) damaged entries removed") }
        if totalsCorrected { parts.append("totals recomputed") }
        return parts.joined(separator: ", ")
    }
}
