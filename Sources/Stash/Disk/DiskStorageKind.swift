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
public struct DiskStorageKind: Sendable, Hashable, CustomStringConvertible {
    /// The kinds there are. Private, so that a kind added later breaks no
    /// caller's `switch`: compare with `==` instead.
    private enum Kind: Hashable {
        case sqlite
        case file
        case mixed(inlineThreshold: Int)
    }

    private let kind: Kind

    private init(_ kind: Kind) {
        self.kind = kind
    }

    /// Every value is stored inline in the SQLite manifest.
    ///
    /// Best for many small values. A value may not exceed SQLite's length limit
    /// (1,000,000,000 bytes by default): larger ones are rejected with
    /// ``StashError/Code/valueTooLarge``.
    public static let sqlite = DiskStorageKind(.sqlite)

    /// Every value is stored in a file of its own under `data/`; the manifest
    /// holds only metadata.
    public static let file = DiskStorageKind(.file)

    /// Values of at most `inlineThreshold` bytes are stored inline in the
    /// manifest; larger values get a file of their own.
    ///
    /// A value of exactly `inlineThreshold` bytes is stored inline. A threshold
    /// of 0 stores only empty values inline. A negative threshold is treated as
    /// 0 (the cache logs a warning when it opens), as every negative limit is.
    ///
    /// - Complexity: O(1).
    public static func mixed(inlineThreshold: Int) -> DiskStorageKind {
        DiskStorageKind(.mixed(inlineThreshold: inlineThreshold))
    }

    /// The inline threshold of a ``mixed(inlineThreshold:)`` kind; `nil` for
    /// ``sqlite`` and ``file``.
    public var inlineThreshold: Int? {
        if case .mixed(let threshold) = kind { return threshold }
        return nil
    }

    /// The inline threshold of ``default``: 32 KiB (32,768 bytes).
    ///
    /// Why this size: reads are cheaper from a file than inline from some tens of
    /// KiB on, while creating a file costs several times an inline write on the
    /// disk file systems where caches live (`~/.cache`, `Library/Caches`); 32 KiB
    /// sits between the read crossover and the write-heavy one, so an inline read
    /// costs little more than a file read at worst. The measured crossovers are
    /// in docs/benchmarks.md ("Inline-threshold crossover"). A cache kept on tmpfs,
    /// where files are cheap to create, may prefer `.mixed(inlineThreshold: 16 * 1024)`.
    public static let defaultInlineThreshold = 32 * 1024

    /// The default kind: ``mixed(inlineThreshold:)`` with ``defaultInlineThreshold``.
    public static let `default` = DiskStorageKind.mixed(inlineThreshold: defaultInlineThreshold)

    /// Whether a value of `size` bytes is stored inline in the manifest.
    ///
    /// - Complexity: O(1).
    func storesInline(size: Int) -> Bool {
        switch kind {
        case .sqlite: true
        case .file: false
        case .mixed(let threshold): size <= threshold
        }
    }

    /// The kind as written in Swift, e.g. `mixed(inlineThreshold: 16384)`, for logs
    /// and the command-line tool.
    public var description: String {
        switch kind {
        case .sqlite: "sqlite"
        case .file: "file"
        case .mixed(let threshold): "mixed(inlineThreshold: \(threshold))"
        }
    }
}
