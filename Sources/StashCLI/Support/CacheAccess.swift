#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Stash

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Opening a cache directory for a command, after checking that it is one.
enum CacheAccess {
    /// The file whose presence makes a directory a Stash cache.
    static let manifestName = "manifest.sqlite"

    /// What a command may find at the path it was given.
    enum Requirement {
        /// An existing cache (every command but `set`).
        case existingCache
        /// An existing cache, an empty directory or nothing: `set` creates the
        /// cache in the last two.
        case cacheOrEmpty
    }

    /// Throws unless `path` meets `requirement`. Never creates anything.
    static func check(_ path: String, _ requirement: Requirement) throws(CLIError) {
        if path.isEmpty {
            throw CLIError(.usage, "the cache directory must not be empty")
        }
        var status = stat()
        if stat(path, &status) != 0 {
            let code = errno
            if code == ENOENT {
                if requirement == .cacheOrEmpty { return }
                throw CLIError(.noCache, "no such directory: \(path)")
            }
            throw CLIError(.noCache, "cannot use \(path): \(StandardStreams.errorDescription(code))")
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw CLIError(.noCache, "not a directory: \(path)")
        }
        if access("\(path)/\(manifestName)", F_OK) == 0 { return }
        switch requirement {
        case .existingCache:
            throw CLIError(.noCache, "\(path) is not a Stash cache (it has no \(manifestName))")
        case .cacheOrEmpty:
            let contents: [String]
            do {
                contents = try FileManager.default.contentsOfDirectory(atPath: path)
            } catch {
                throw CLIError(.noCache, "cannot list \(path): \(error.localizedDescription)")
            }
            if !contents.isEmpty {
                throw CLIError(
                    .noCache,
                    "\(path) is not a Stash cache (it has no \(manifestName)) and is not empty: refusing to create a cache in it")
            }
        }
    }

    /// Checks `path`, opens the cache in it without background timers, runs
    /// `body`, and closes the cache, whatever `body` does.
    static func withCache<Result>(
        _ path: String, _ requirement: Requirement = .existingCache,
        _ body: (DiskCache<Data>) throws(CLIError) -> Result
    ) throws(CLIError) -> Result {
        try check(path, requirement)
        let cache: DiskCache<Data>
        do {
            cache = try DiskCache<Data>(
                directory: path,
                configuration: .init(autoTrimInterval: nil, logger: CacheLog.logger))
        } catch {
            throw CLIError(error, doing: "open the cache in \(path)")
        }
        defer {
            // The check scheduled by opening may still be pending: what it
            // would log after this is noise (it finds the cache closed).
            CacheLog.mute()
            cache.close()
        }
        return try body(cache)
    }

    /// Runs a cache operation, turning a ``StashError`` into a ``CLIError``.
    static func attempt<Result>(_ what: String, _ body: () throws(StashError) -> Result) throws(CLIError) -> Result {
        do {
            return try body()
        } catch {
            throw CLIError(error, doing: what)
        }
    }
}

extension CLIError {
    /// The error for a ``StashError`` thrown while trying to do `what`.
    init(_ error: StashError, doing what: String) {
        let status: ExitStatus =
            switch error.code {
            case .invalidKey, .invalidArgument: .usage
            case .directoryUnusable: .noCache
            default: .failure
            }
        var message = "cannot \(what): \(error.message)"
        if let cause = error.cause {
            message += " (\(cause))"
        }
        self.init(status, message)
    }
}
