import Foundation
@testable import Stash

/// A fresh, empty directory under the system's temporary directory.
///
/// Use it through ``withTemporaryDirectory(_:)``, which deletes it when the body
/// returns, after closing every cache registered with ``closeBeforeRemoval(_:)``
/// (the disk-cache factories register theirs): a cache's background check never
/// races the deletion, and no test has to keep the directory alive by hand.
///
/// ```swift
/// try withTemporaryDirectory { directory in
///     let cache = try makeDiskCache(directory, codec: .data)
///     ...
/// }
/// ```
final class TemporaryDirectory: Sendable {
    /// The directory's absolute path, without a trailing slash.
    let path: String
    /// What to close before the directory goes, in registration order.
    private let closers = LockedValue<[@Sendable () -> Void]>([])

    /// Creates a uniquely named directory.
    init() throws {
        let base = FileManager.default.temporaryDirectory.path
        let name = "stash-tests-\(UUID().uuidString)"
        path = "\(base)/\(name)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// `path` + "/" + `component`.
    func appending(_ component: String) -> String {
        "\(path)/\(component)"
    }

    /// Registers `cache` to be closed before the directory is deleted.
    func closeBeforeRemoval<Value>(_ cache: DiskCache<Value>) {
        closers.withLock { $0.append { cache.close() } }
    }

    /// Closes what was registered, then deletes the directory (FileManager
    /// removes symbolic links as links, never their targets). Idempotent.
    func remove() {
        let closers = closers.withLock { closers in
            defer { closers.removeAll() }
            return closers
        }
        for close in closers { close() }
        try? FileManager.default.removeItem(atPath: path)
    }

    deinit {
        remove()
    }
}

/// Runs `body` with a fresh temporary directory, then closes the caches
/// registered with it and deletes it, whether `body` returns or throws.
func withTemporaryDirectory<Result>(_ body: (TemporaryDirectory) throws -> Result) throws -> Result {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    return try body(directory)
}

/// The async form of ``withTemporaryDirectory(_:)``.
func withTemporaryDirectory<Result>(_ body: (TemporaryDirectory) async throws -> Result) async throws -> Result {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    return try await body(directory)
}
