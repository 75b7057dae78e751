import BenchSupport
import Foundation
import Logging
import Stash
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A storage kind of `DiskCache`, as a type, so that each kind is a contender of
/// its own (`DiskCacheStore<InlineKind>`...) and the workload stays specialised.
public protocol DiskCacheKindTag {
    static var kind: DiskStorageKind { get }
    /// How tables name the kind: "sqlite", "file", "mixed 32 KiB".
    static var label: String { get }
    static var shortLabel: String { get }
}

/// `.sqlite`: every value inline in the manifest.
public enum InlineKind: DiskCacheKindTag {
    public static var kind: DiskStorageKind { .sqlite }
    public static var label: String { "sqlite" }
    public static var shortLabel: String { "DC sqlite" }
}

/// `.file`: every value in a file of its own.
public enum FileKind: DiskCacheKindTag {
    public static var kind: DiskStorageKind { .file }
    public static var label: String { "file" }
    public static var shortLabel: String { "DC file" }
}

/// `.default`: `.mixed` with the library's default inline threshold.
public enum DefaultKind: DiskCacheKindTag {
    public static var kind: DiskStorageKind { .default }
    public static var label: String { "mixed \(byteSizeText(DiskStorageKind.defaultInlineThreshold))" }
    public static var shortLabel: String { "DC mixed" }
}

/// "16 KiB", "1 MiB", "100 B": sizes as the tables print them.
public func byteSizeText(_ bytes: Int) -> String {
    if bytes >= 1 << 20, bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
    if bytes >= 1 << 10, bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
    return "\(bytes.formatted()) B"
}

/// Stash's `DiskCache<Data>` as a disk contender: opened with no limits and no
/// background trim (`autoTrimInterval: nil`), and only once the consistency check
/// it starts in the background after opening has finished (see
/// `openQuiescedDiskCache`), so that check never runs inside a timed region.
///
/// A write is `setValue(Data, forKey:)` with the `Data` built before timing; a
/// read is `value(forKey:)`, whose `Data` is the store's result (one byte of it is
/// copied to the caller's buffer for the checksum). Reads record last-access times
/// in memory and write them on `flush`/`close`, after the timed regions here
/// (1,024 pending reads would flush inside a read, as they would in an app).
public final class DiskCacheStore<Kind: DiskCacheKindTag>: DiskStoreUnderTest {
    public static var displayName: String { "DiskCache (\(Kind.label))" }
    public static var shortName: String { Kind.shortLabel }
    public static var isFloor: Bool { false }

    private let cache: DiskCache<Data>
    private let keys: [String]

    public init(directory: String, keys: [String]) throws {
        self.keys = keys
        cache = try openQuiescedDiskCache(directory: directory, storage: Kind.kind).cache
        let report = try cache.verify()
        if !report.isClean {
            throw BenchError("\(Self.displayName): the consistency check of a new cache repaired something: \(report)")
        }
    }

    public func write(_ index: Int, _ value: DiskValue) throws {
        try cache.setValue(value.data, forKey: keys[index])
    }

    public func read(_ index: Int, into buffer: UnsafeMutableRawBufferPointer) throws -> Int? {
        guard let data = try cache.value(forKey: keys[index]) else { return nil }
        let size = data.count
        if size > 0, size / 2 < buffer.count { buffer[size / 2] = data[data.startIndex + size / 2] }
        return size
    }

    public func close() {
        cache.close()
    }
}

// MARK: - Opening a DiskCache outside the background check

/// The name of the file planted in a cache's `trash/` before it opens. Only the
/// background job that follows the consistency check empties the trash (no
/// auto-trim runs, nothing calls `removeAll()`), so when this file is gone the
/// check has finished and released the cache's lock.
let checkMarkerName = "stash-bench-check-marker"

/// A `DiskCache` just opened, with how long its background check took.
struct OpenedDiskCache {
    var cache: DiskCache<Data>
    /// From the initialiser's return until the background consistency check (and
    /// its trash emptying) had finished.
    var checkNanoseconds: UInt64
}

/// Plants the check marker in `directory/trash/` (creating both folders if needed).
func plantCheckMarker(in directory: String) throws {
    let trash = (directory as NSString).appendingPathComponent("trash")
    try FileManager.default.createDirectory(atPath: trash, withIntermediateDirectories: true)
    let marker = (trash as NSString).appendingPathComponent(checkMarkerName)
    guard FileManager.default.createFile(atPath: marker, contents: nil) else {
        throw BenchError("cannot create \(marker)")
    }
}

/// Waits until the background check of a cache opened on `directory` with a
/// planted marker has finished (the marker is deleted), polling every 20 µs.
func waitForBackgroundCheck(in directory: String, timeout: Duration = .seconds(300)) throws {
    let marker = (directory as NSString).appendingPathComponent("trash/\(checkMarkerName)")
    let deadline = monotonicNanoseconds() + UInt64(timeout.components.seconds) * 1_000_000_000
    while access(marker, F_OK) == 0 {
        if monotonicNanoseconds() > deadline {
            throw BenchError("the background consistency check of the DiskCache in \(directory) did not finish in \(timeout)")
        }
        usleep(20)
    }
}

/// Plants the check marker, then opens a `DiskCache<Data>` on `directory` as every
/// contender does (no limits, no auto-trim, the benchmark's logger); returns it with
/// the nanoseconds its initialiser took. Its background check may still be running.
func openMarkedDiskCache(directory: String, storage: DiskStorageKind) throws -> (cache: DiskCache<Data>, initNanoseconds: UInt64) {
    try plantCheckMarker(in: directory)
    let start = monotonicNanoseconds()
    let cache = try DiskCache<Data>(
        directory: directory,
        configuration: .init(storage: storage, autoTrimInterval: nil, logger: BenchLog.logger))
    return (cache, monotonicNanoseconds() - start)
}

/// ``openMarkedDiskCache(directory:storage:)``, returning once the cache's
/// background consistency check is over.
func openQuiescedDiskCache(directory: String, storage: DiskStorageKind) throws -> OpenedDiskCache {
    let cache = try openMarkedDiskCache(directory: directory, storage: storage).cache
    let opened = monotonicNanoseconds()
    try waitForBackgroundCheck(in: directory)
    return OpenedDiskCache(cache: cache, checkNanoseconds: monotonicNanoseconds() - opened)
}

// MARK: - Logging

/// Where the DiskCaches under test log: notices and worse are kept (a repair or a
/// failure means the figures are suspect) and reported as notes; nothing is printed.
public enum BenchLog {
    private static let messages = Mutex<[String]>([])

    static let logger = Logger(label: "stash-bench.DiskCache") { _ in RecordingLogHandler() }

    /// The messages logged so far (at most the first 20), and forgets them.
    public static func drain() -> [String] {
        messages.withLock { messages in
            defer { messages.removeAll() }
            return messages
        }
    }

    fileprivate static func record(_ text: String) {
        messages.withLock { messages in
            if messages.count < 20 { messages.append(text) }
        }
    }

    private struct RecordingLogHandler: LogHandler {
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .notice

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            var fields = metadata
            if let extra = event.metadata { fields.merge(extra) { $1 } }
            let details = fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            BenchLog.record("DiskCache logged \(event.level): \(event.message) \(details)")
        }
    }
}
