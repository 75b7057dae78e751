#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

import Logging

/// The `trash/` directory of a disk cache: whole directories and damaged files
/// are renamed into it (cheap, atomic, same file system) and deleted later by
/// ``empty()``, off the hot path.
///
/// Thread-safe and independent of ``KVStorage``'s lock: the storage only ever
/// renames new, uniquely named entries into the trash and never reads from it, so
/// an owner can call ``empty()`` on a background thread while the storage keeps
/// working. Two concurrent ``empty()`` calls (two threads or processes) are safe:
/// each tolerates entries vanishing under it.
struct Trash: Sendable {
    /// The path of the `trash/` directory.
    let path: String
    /// Where failures to delete are reported.
    let logger: Logger

    /// The deepest directory nesting ``empty()`` descends into. Stash itself
    /// nests two levels; anything deeper is left for a later pass rather than
    /// risking running out of file descriptors.
    static let maximumDepth = 64

    /// Renames the entry at `itemPath` (file, directory or link: the entry
    /// itself, never a link's target) into the trash under a fresh unique name.
    ///
    /// - Parameters:
    ///   - itemPath: The entry to move; must be on the trash's file system.
    ///   - label: A readable prefix for the new name, such as `"data"`.
    /// - Returns: The entry's new path in the trash, or `nil` if there was no
    ///   entry at `itemPath`.
    /// - Throws: ``SystemCallError`` if the rename fails for another reason.
    @discardableResult
    func moveIn(_ itemPath: String, label: String) throws(SystemCallError) -> String? {
        _ = try? FileSystem.makeDirectory(path)
        let target = "\(path)/\(label)-\(FileNameGenerator.randomName(hexDigits: 16))"
        do {
            try FileSystem.rename(itemPath, to: target)
            return target
        } catch where error.errno == ENOENT {
            return nil
        }
    }

    /// Deletes everything in the trash, without ever following a symbolic link:
    /// directories are walked with `openat(O_NOFOLLOW)` and entries removed with
    /// `unlinkat`, so a link inside the trash is removed as a link and whatever it
    /// points to, inside or outside the cache, is untouched.
    ///
    /// Entries that cannot be removed are logged and left for the next call.
    ///
    /// - Returns: The number of entries (files, links and directories) removed.
    /// - Complexity: O(n) in the number of entries in the trash.
    @discardableResult
    func empty() -> Int {
        let descriptor: Int32
        do {
            descriptor = try FileSystem.openDirectory(path)
        } catch {
            if error.errno != ENOENT {
                logger.warning("cannot open the trash directory", metadata: ["path": "\(path)", "error": "\(error)"])
            }
            return 0
        }
        defer { FileSystem.closeDescriptor(descriptor) }
        return removeContents(of: descriptor, depth: 0)
    }

    /// Removes every entry inside the open directory `directory`.
    private func removeContents(of directory: Int32, depth: Int) -> Int {
        let entries: [FileSystem.DirectoryEntry]
        do {
            entries = try FileSystem.entries(ofDirectory: directory)
        } catch {
            logger.warning("cannot list a trash directory", metadata: ["error": "\(error)"])
            return 0
        }
        var removed = 0
        for entry in entries {
            removed += entry.rawName.withUnsafeBufferPointer { raw in
                guard let name = raw.baseAddress else { return 0 }
                return removeEntry(name, displayName: entry.name, in: directory, depth: depth)
            }
        }
        return removed
    }

    /// Removes one entry (recursively if it is a real directory).
    private func removeEntry(_ name: UnsafePointer<CChar>, displayName: String, in directory: Int32, depth: Int) -> Int {
        let status: FileSystem.Status
        do {
            status = try FileSystem.entryStatus(name, in: directory)
        } catch {
            return 0  // already gone, or unreadable: nothing to do now
        }
        var removed = 0
        if status.type == .directory {
            guard depth < Self.maximumDepth else {
                logger.warning("trash nested too deeply; leaving it", metadata: ["entry": "\(displayName)"])
                return 0
            }
            do {
                let child = try FileSystem.openDirectory(name, in: directory)
                removed += removeContents(of: child, depth: depth + 1)
                FileSystem.closeDescriptor(child)
            } catch {
                logger.warning("cannot open a trash directory", metadata: ["entry": "\(displayName)", "error": "\(error)"])
                return removed
            }
        }
        do {
            if try FileSystem.removeEntry(name, in: directory, isDirectory: status.type == .directory) { removed += 1 }
        } catch {
            let what = status.type == .directory ? "directory" : "entry"
            logger.warning("cannot remove a trash \(what)", metadata: ["entry": "\(displayName)", "error": "\(error)"])
        }
        return removed
    }
}
