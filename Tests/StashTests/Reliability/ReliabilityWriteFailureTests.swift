import Foundation
import Testing
@testable import Stash

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Write failures: a full file system (a 1 MiB tmpfs, where mounting is allowed), a
/// file-size limit (RLIMIT_FSIZE in a `stash-stress fsize` child), and a read-only
/// `data/` (which does not stop root). Writes must throw a clear error, and what
/// was stored before must stay intact and readable.
///
/// Rerun: `swift test --filter ReliabilityWriteFailureTests`.
@Suite(.serialized, .timeLimit(.minutes(Reliability.minutes(10)))) struct ReliabilityWriteFailureTests {
    /// Mounts a tmpfs of `size` at `path`; `false` when not permitted (not root, no
    /// CAP_SYS_ADMIN, a container without mount rights).
    static func mountTmpfs(at path: String, size: String) -> Bool {
        #if os(Linux)
        return mount("tmpfs", path, "tmpfs", 0, "size=\(size),mode=0700") == 0
        #else
        return false
        #endif
    }

    static func unmount(_ path: String) {
        #if os(Linux)
        if umount2(path, 0) != 0 { umount2(path, Int32(MNT_DETACH)) }
        #endif
    }

    /// A self-describing value of `length` bytes for `key`.
    static func value(_ key: String, _ length: Int, seq: UInt64 = 1) -> Data {
        StressValue.make(key: key, seq: seq, length: length)
    }

    /// Reads back every entry of `stored` and expects its exact bytes.
    static func expectIntact(_ cache: DiskCache<Data>, _ stored: [String: Data], _ when: String,
                             sourceLocation: SourceLocation = #_sourceLocation) {
        var lost: [String] = []
        for (key, bytes) in stored.sorted(by: { $0.key < $1.key }) {
            let read = try? cache.value(forKey: key)
            if read != bytes { lost.append(key) }
        }
        #expect(lost.isEmpty, "\(when): \(lost.count) of \(stored.count) entries lost or changed: \(lost.prefix(5))",
                sourceLocation: sourceLocation)
    }

    // Four minutes: under the address sanitizer in CI it took 91 to 125 s in four runs, and 161 s
    // once (2026-11-26), past a two-minute limit; the work is fixed, only the machine varies.
    @Test(.timeLimit(.minutes(Reliability.minutes(4))))
    func aFullFileSystemFailsWritesClearlyAndKeepsEveryStoredEntry() throws {
        try withTemporaryDirectory { directory in
            let mountPoint = directory.appending("tmpfs")
            try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
            guard Self.mountTmpfs(at: mountPoint, size: "1m") else {
                print("Reliability write failures: mounting a tmpfs is not permitted here (errno \(errno)); covered by RLIMIT_FSIZE")
                return
            }
            defer { Self.unmount(mountPoint) }

            // Ballast: deleted at the end, to give space back as another program would.
            let ballast = "\(mountPoint)/ballast"
            try Data(count: 200_000).write(to: URL(fileURLWithPath: ballast))
            let log = LogRecorder()
            let cache = try DiskCache<Data>(
                directory: "\(mountPoint)/cache",
                configuration: .init(storage: .mixed(inlineThreshold: 4096), autoTrimInterval: nil, logger: log.logger))
            var stored: [String: Data] = [:]
            for index in 0..<8 {
                stored["file-\(index)"] = Self.value("file-\(index)", 40_000, seq: UInt64(index))
                stored["inline-\(index)"] = Self.value("inline-\(index)", 1_000, seq: UInt64(index))
            }
            for (key, bytes) in stored { try cache.setValue(bytes, forKey: key) }

            // A file value larger than the file system.
            var failures: [StashError] = []
            do throws(StashError) {
                try cache.setValue(Self.value("huge", 2 << 20), forKey: "huge")
                Issue.record("a 2 MiB write to a 1 MiB file system succeeded")
            } catch {
                #expect(error.code == .ioFailed)
                #expect(error.message.contains("cannot write the file for \"huge\""), "\(error)")
                #expect((error.cause as? SystemCallError)?.errno == ENOSPC, "\(error)")
                #expect(error.description.contains("No space left on device"), "\(error)")
                failures.append(error)
            }
            // An overwrite that fails keeps the old value.
            #expect(throws: StashError.self) { try cache.setValue(Self.value("file-0", 2 << 20, seq: 99), forKey: "file-0") }
            Self.expectIntact(cache, stored, "after failed file writes")

            // Fill the rest: file and inline values, until writes fail.
            var index = 0
            var inlineFailure: StashError?
            var fileFailure: StashError?
            while index < 2_000, inlineFailure == nil || fileFailure == nil {
                index += 1
                let isFile = index % 2 == 0
                if isFile && fileFailure != nil || !isFile && inlineFailure != nil { continue }
                let key = isFile ? "more-file-\(index)" : "more-inline-\(index)"
                let bytes = Self.value(key, isFile ? 30_000 : 3_000, seq: UInt64(index))
                do throws(StashError) {
                    try cache.setValue(bytes, forKey: key)
                    stored[key] = bytes
                } catch {
                    if isFile { fileFailure = error } else { inlineFailure = error }
                    failures.append(error)
                }
            }
            let inline = try #require(inlineFailure, "inline writes never failed")
            let file = try #require(fileFailure, "file writes never failed")
            print("Reliability write failures (tmpfs 1 MiB): \(stored.count) entries stored; errors: \(inline); \(file)")
            #expect(inline.code == .databaseFailed || inline.code == .ioFailed, "\(inline)")
            #expect(inline.message.contains("full"), "the message names the problem: \(inline.message)")
            #expect(file.code == .ioFailed || file.code == .databaseFailed, "\(file)")
            #expect(file.message.contains("No space left on device") || file.message.contains("full"),
                    "the message names the problem: \(file.message)")
            Self.expectIntact(cache, stored, "with the file system full")

            // removeAll on a full file system: either everything goes, or (it throws)
            // nothing does.
            do {
                try cache.removeAll()
                #expect(try cache.count == 0)
                stored.removeAll()
            } catch {
                print("Reliability write failures: removeAll on a full file system threw \(error)")
                Self.expectIntact(cache, stored, "after a failed removeAll")
            }

            // On a full file system even removals fail (the WAL must grow): check that
            // they fail cleanly, then give space back, after which everything works.
            if let key = stored.keys.sorted().first(where: { $0.hasPrefix("more-file-") }) {
                do throws(StashError) {
                    try cache.removeValue(forKey: key)
                    stored[key] = nil
                } catch {
                    print("Reliability write failures: removeValue on a full file system threw \(error)")
                    #expect(error.message.contains("full"), "\(error)")
                }
            }
            Self.expectIntact(cache, stored, "after a removal on a full file system")
            try FileManager.default.removeItem(atPath: ballast)
            for key in stored.keys.filter({ $0.hasPrefix("more-file-") }) {
                try cache.removeValue(forKey: key)
                stored[key] = nil
            }
            let after = Self.value("after", 20_000)
            try cache.setValue(after, forKey: "after")
            stored["after"] = after
            Self.expectIntact(cache, stored, "after space was freed")
            cache.close()
            try expectConsistentDirectory("\(mountPoint)/cache", allowOrphans: false)
        }
    }

    @Test(.timeLimit(.minutes(Reliability.minutes(2))))
    func aFileSizeLimitFailsWritesClearlyAndKeepsEveryStoredEntry() async throws {
        try await withTemporaryDirectory { directory in
            let cachePath = directory.appending("cache")
            var stored: [String: Data] = [:]
            do {
                let cache = try DiskCache<Data>(
                    directory: cachePath,
                    configuration: .init(storage: .mixed(inlineThreshold: 4096), autoTrimInterval: nil))
                for index in 0..<30 {
                    let key = "before-\(index)"
                    stored[key] = Self.value(key, index % 3 == 0 ? 30_000 : 1_000, seq: UInt64(index))
                    try await cache.setValue(stored[key]!, forKey: key)
                }
                await cache.close()
            }
            // The child sets RLIMIT_FSIZE to 96 KB (ignoring SIGXFSZ), then writes.
            let child = try StressChild(["fsize", "--dir", cachePath, "--limit", "\(96 * 1024)"],
                                        stderrPath: directory.appending("stderr.txt"))
            let lines = await child.finish()
            #expect(child.exitedCleanly, "\(child.standardError)")
            #expect(lines.first == "BEFORE \(stored.count)", "\(lines.prefix(3))")
            let errors = lines.filter { $0.hasPrefix("ERR ") }
            let storedKeys = lines.filter { $0.hasPrefix("STORED ") }.map { String($0.dropFirst(7)) }
            print("""
                Reliability write failures (RLIMIT_FSIZE 96 KB): \(errors.count) writes failed, \(storedKeys.count) succeeded; \
                first errors: \(Set(errors.map { $0.prefix(60) + "…" + $0.suffix(70) }).sorted().prefix(3))
                """)
            // The large file write fails with the reason in the message.
            #expect(errors.first?.hasPrefix("ERR I/O failed|") == true, "\(errors.first ?? "none")")
            #expect(errors.first?.contains("cannot write the file for \"too-large-file\"") == true)
            #expect(errors.first?.contains("File too large") == true)
            // Inline writes fail once the WAL reaches the limit. SQLite reports EFBIG only
            // as "disk I/O error" (SQLITE_IOERR_WRITE): the message says that much.
            #expect(errors.contains { $0.hasPrefix("ERR database failed|") && $0.contains("while storing \"inline-") && $0.contains(": disk I/O error") },
                    "\(errors.suffix(2))")
            #expect(!storedKeys.contains("before-0"), "the overwrite past the limit failed")
            #expect(lines.last == "INTACT \(stored.count)", "\(lines.suffix(3))")

            // Reopened without the limit: everything stored before, and everything the
            // child stored, reads back exactly.
            let cache = try DiskCache<Data>(
                directory: cachePath,
                configuration: .init(storage: .mixed(inlineThreshold: 4096), autoTrimInterval: nil))
            Self.expectIntact(cache, stored, "after the child's failed writes")
            for key in storedKeys {
                let bytes = try await cache.value(forKey: key)
                #expect(bytes.flatMap { StressValue.seq(of: $0, key: key) } == 1, "\(key) reads back")
            }
            await cache.close()
            try expectConsistentDirectory(cachePath, allowOrphans: false)
        }
    }

    /// chmod does not stop root: as root this only checks (and the report states)
    /// that the mechanism is unavailable; as another user, writes must fail clearly.
    @Test func aReadOnlyDataDirectoryFailsWritesClearlyUnlessRoot() throws {
        try withTemporaryDirectory { directory in
            let cachePath = directory.appending("cache")
            let cache = try DiskCache<Data>(
                directory: cachePath,
                configuration: .init(storage: .mixed(inlineThreshold: 4096), autoTrimInterval: nil))
            let stored = ["small": Self.value("small", 500), "large": Self.value("large", 50_000)]
            for (key, bytes) in stored { try cache.setValue(bytes, forKey: key) }
            chmod("\(cachePath)/data", 0o500)
            defer { chmod("\(cachePath)/data", 0o700) }
            do throws(StashError) {
                try cache.setValue(Self.value("blocked", 50_000), forKey: "blocked")
                #expect(geteuid() == 0, "only root can write into a 0500 directory")
                print("Reliability write failures: a read-only data/ does not stop root (euid 0): mechanism unavailable here")
            } catch {
                #expect(geteuid() != 0)
                #expect(error.code == .ioFailed)
                #expect(error.message.contains("Permission denied"), "\(error)")
            }
            Self.expectIntact(cache, stored, "after writing into a read-only data/")
        }
    }
}
