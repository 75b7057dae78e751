/// Where the disk cache keeps each value's bytes: inside its SQLite manifest,
/// in a file of its own, or chosen by size.
///
/// Small values are faster inline: one SQLite row read, no file to open. Large
/// values are faster as files: SQLite copies a BLOB through its page cache and
/// keeps overflow pages, while a file is one `read` and is freed at once when
/// removed. ``mixed(inlineThreshold:)`` gets the best of both and is the default.
///
/// ```swift
/// let kind: DiskStorageKind = .mixed(inlineThreshold: 32 * 1024)
/// ```
///
/// The kind only governs new writes: every entry records where its bytes are, so
/// a cache reopened with another kind still reads everything it holds.
///
/// A value type: `Sendable`, safe to share between threads.
public enum DiskStorageKind: Sendable, Hashable, CustomStringConvertible {
    /// Every value is stored inline in the SQLite manifest.
    ///
    /// Best for many small values. A value may not exceed SQLite's length limit
    /// (1,000,000,000 bytes by default): larger ones are rejected with
    /// ``StashError/Code/valueTooLarge``.
    case sqlite

    /// Every value is stored in a file of its own under `data/`; the manifest
    /// holds only metadata.
    case file

    /// Values of at most `inlineThreshold` bytes are stored inline in the
    /// manifest; larger values get a file of their own.
    ///
    /// A value of exactly `inlineThreshold` bytes is stored inline. A threshold
    /// of 0 stores only empty values inline. A negative threshold is rejected with
    /// ``StashError/Code/invalidArgument`` when the storage opens.
    case mixed(inlineThreshold: Int)

    /// The inline threshold of ``default``: 32 KiB (32,768 bytes).
    ///
    /// Measured by `stash-bench` (docs/benchmarks.md, "Inline-threshold
    /// crossover"), timing every value inline against every value in a file from
    /// 1 KiB to 1 MiB. Files became cheaper than inline storage from these sizes
    /// (2026-11-22, after file reads dropped `fstat` and gained `O_NOATIME`):
    ///
    /// | file system | write | read | one write per four reads |
    /// |---|---:|---:|---:|
    /// | tmpfs | 4.2 KiB | 20 KiB | 9.0 KiB |
    /// | ext4 (this machine's disk, no journal) | 303 KiB | 13 KiB | 251 KiB |
    ///
    /// Reads cross over at 13–27 KiB wherever the cache lives (over several runs);
    /// writes follow what creating a file costs, which only tmpfs makes cheap. The
    /// mixed workload (one write per four reads) therefore crosses over anywhere
    /// from 9 KiB (tmpfs) to 250 KiB (a disk). The default sits between the read
    /// crossover and that range's middle (about 48 KiB in log scale): at 32 KiB an
    /// inline read costs 1.1–1.4× a file read (a few µs), while on ext4 a file
    /// write costs 6× an inline one, and caches live on disk file systems
    /// (`~/.cache`, `Library/Caches`). The benchmark page also gives a
    /// lower bound, the tmpfs crossover for one write per four reads (9–12 KiB,
    /// which its rounding to a power of two puts at 8 or 16 KiB from run to run):
    /// a cache kept on tmpfs may pass `.mixed(inlineThreshold: 16 * 1024)`. For
    /// comparison, `NSURLCache` keeps responses up to 16 KB in SQLite, and YYCache
    /// measured 20 KB on an iPhone 6.
    public static let defaultInlineThreshold = 32 * 1024

    /// The default kind: ``mixed(inlineThreshold:)`` with ``defaultInlineThreshold``.
    public static let `default` = DiskStorageKind.mixed(inlineThreshold: defaultInlineThreshold)

    /// Whether a value of `size` bytes is stored inline in the manifest.
    ///
    /// - Complexity: O(1).
    func storesInline(size: Int) -> Bool {
        switch self {
        case .sqlite: true
        case .file: false
        case .mixed(let threshold): size <= threshold
        }
    }

    /// The kind as written in Swift, e.g. `mixed(inlineThreshold: 16384)`, for logs
    /// and the command-line tool.
    public var description: String {
        switch self {
        case .sqlite: "sqlite"
        case .file: "file"
        case .mixed(let threshold): "mixed(inlineThreshold: \(threshold))"
        }
    }
}
