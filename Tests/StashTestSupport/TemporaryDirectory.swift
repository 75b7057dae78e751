import Foundation
import Stash

/// A fresh, empty directory under the system's temporary directory, deleted by ``remove()`` or
/// at deinit.
///
/// Use it through ``withTemporaryDirectory(_:)-(TemporaryDirectory)->Result``, which deletes it
/// when the body returns, after running every closer registered with
/// ``closeBeforeRemoval(_:)`` (the disk-cache factories register their caches' `close()`): a
/// cache's background work never races the deletion.
///
/// ```swift
/// try withTemporaryDirectory { directory in
///     let cache = try makeDiskCache(directory, codec: .data)
///     ...
/// }
/// ```
public final class TemporaryDirectory: Sendable {
    /// The directory's absolute path, without a trailing slash.
    public let path: String
    /// What to run before the directory goes, in registration order.
    private let closers = LockedValue<[@Sendable () -> Void]>([])

    /// Creates a uniquely named directory, `stash-tests-<UUID>` by default.
    ///
    /// - Parameter prefix: The start of the directory's name, to tell the test target that left
    ///   it behind.
    /// - Throws: What `FileManager` throws when it cannot create the directory.
    public init(prefix: String = "stash-tests") throws {
        let base = FileManager.default.temporaryDirectory.path
        path = "\(base)/\(prefix)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// `path` + "/" + `component`.
    public func appending(_ component: String) -> String {
        "\(path)/\(component)"
    }

    /// Registers `close` to run before the directory is deleted.
    public func closeBeforeRemoval(_ close: @escaping @Sendable () -> Void) {
        closers.withLock { $0.append(close) }
    }

    /// Runs what was registered, then deletes the directory (FileManager removes symbolic links
    /// as links, never their targets). Idempotent.
    public func remove() {
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

/// Runs `body` with a fresh temporary directory, then runs the closers registered with it and
/// deletes it, whether `body` returns or throws.
public func withTemporaryDirectory<Result>(_ body: (TemporaryDirectory) throws -> Result) throws -> Result {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    return try body(directory)
}

/// The async form of ``withTemporaryDirectory(_:)-(TemporaryDirectory)->Result``.
public func withTemporaryDirectory<Result>(
    _ body: (TemporaryDirectory) async throws -> Result
) async throws -> Result {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    return try await body(directory)
}
