import Foundation

/// A fresh, empty directory under the system's temporary directory, deleted
/// (without following symbolic links) when the value is deinitialised.
///
/// ```swift
/// let temporary = try TemporaryDirectory()
/// let storage = try KVStorage(directory: temporary.path, ...)
/// ```
final class TemporaryDirectory: Sendable {
    /// The directory's absolute path, without a trailing slash.
    let path: String

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

    deinit {
        // FileManager removes symbolic links as links, never their targets.
        try? FileManager.default.removeItem(atPath: path)
    }
}
