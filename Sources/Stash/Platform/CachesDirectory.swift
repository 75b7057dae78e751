import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where each platform keeps caches that can be rebuilt.
enum CachesDirectory {
    /// The directory for a cache named `name`:
    /// - Apple platforms: `Library/Caches/<name>` in the user's (or app's) home;
    /// - Linux and others: `$XDG_CACHE_HOME/<name>`, or `~/.cache/<name>` when
    ///   `XDG_CACHE_HOME` is unset, empty or not absolute (as the XDG Base
    ///   Directory specification says to ignore a relative one).
    ///
    /// - Throws: ``StashError/Code/invalidArgument`` for a name that is empty,
    ///   `.` or `..`, or contains `/` or NUL; ``StashError/Code/directoryUnusable``
    ///   when no home directory can be found.
    static func path(forName name: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(StashError) -> String {
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/"), !name.contains("\0") else {
            throw StashError(.invalidArgument, "a cache name must be a single path component (got \"\(name)\")")
        }
        #if canImport(Darwin)
        guard let caches = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first else {
            throw StashError(.directoryUnusable, "the system reported no caches directory")
        }
        return caches.appendingPathComponent(name, isDirectory: true).path
        #else
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            return "\(xdg)/\(name)"
        }
        guard let home = environment["HOME"].flatMap({ $0.isEmpty ? nil : $0 }) ?? homeFromPasswd() else {
            throw StashError(.directoryUnusable, "neither XDG_CACHE_HOME nor HOME is set, so there is no caches directory")
        }
        return "\(home)/.cache/\(name)"
        #endif
    }

    #if !canImport(Darwin)
    private static func homeFromPasswd() -> String? {
        guard let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir else { return nil }
        return String(cString: directory)
    }
    #endif
}
