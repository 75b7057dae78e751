import Foundation
import Logging
@testable import Stash

/// `FuzzDiskEntry`: a manifest row and its value file, as a crash, a disk fault or another
/// process may leave them. The check stores one value (inline or in a file), closes the cache,
/// rewrites the value's row with fuzzed columns (size, file name, inline bytes, times) and
/// possibly its file with fuzzed bytes, then opens the cache again and reads.
///
/// Input: a flags byte; the size, modification, access and expiration times (8 bytes each,
/// little-endian); a file-name length byte and the name; the rest is the payload (the inline
/// bytes, or the file's new content).
///
/// Properties: nothing traps; a read returns `nil`, throws a `StashError`, or returns exactly the
/// bytes the row and its file hold, of the row's size, and never a file the row does not name
/// exactly; afterwards the cache still stores and reads another key, also after `verify()`.
package enum DiskEntryCheck {
    package static func check(_ bytes: [UInt8]) throws(PropertyViolation) {
        var input = FuzzedBytes(bytes)
        let flags = input.byte()
        let inFile = flags & 1 != 0, hasExpiration = flags & 2 != 0, renames = flags & 4 != 0
        let rewritesFile = flags & 8 != 0, nullsInline = flags & 16 != 0, fuzzesSize = flags & 32 != 0
        let size = input.int64(), modified = input.int64(), accessed = input.int64(), expires = input.int64()
        let fuzzedName = String(decoding: input.bytes(Int(input.byte())), as: UTF8.self)
        let payload = Data(input.rest())

        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("stash-fuzz-disk-\(getpid())-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configuration = DiskCacheConfiguration(
            autoTrimInterval: nil, logger: Logger(label: "fuzz") { _ in SwiftLogNoOpLogHandler() })
        let original = inFile ? Data(repeating: 0x2A, count: 64 * 1024) : Data([1, 2, 3])
        do {
            let cache = try DiskCache<Data>(directory: directory, configuration: configuration)
            try cache.setValue(original, forKey: "k")
            cache.close()
        } catch {
            throw PropertyViolation("could not set up the cache: \(error)")
        }

        // The damage, written with SQLite directly.
        let realName: String?
        do {
            let connection = try SQLiteConnection(path: directory + "/" + Manifest.fileName, create: false)
            defer { connection.close() }
            realName = try connection.withStatement("SELECT filename FROM manifest WHERE key = 'k'") {
                statement throws(SQLiteError) in
                try statement.step() == .row ? statement.text(at: 0) : nil
            }
            let name = inFile ? (renames ? fuzzedName : realName) : (renames ? fuzzedName : nil)
            let inline: Data? = inFile || nullsInline ? nil : payload
            let rowSize = fuzzesSize ? size : Int64(inFile ? (rewritesFile ? payload.count : original.count) : payload.count)
            try connection.withStatement("""
                UPDATE manifest SET size = ?1, filename = ?2, inline_data = ?3, modification_time = ?4,
                    last_access_time = ?5, expiration_time = ?6 WHERE key = 'k'
                """) { statement throws(SQLiteError) in
                try statement.bind(rowSize, at: 1)
                try statement.bind(name, at: 2)
                try statement.bind(inline, at: 3)
                try statement.bind(modified, at: 4)
                try statement.bind(accessed, at: 5)
                try statement.bind(hasExpiration ? expires : nil, at: 6)
                try statement.step()
            }
        } catch {
            throw PropertyViolation("could not damage the row: \(error)")
        }
        if rewritesFile, let realName {
            _ = FileManager.default.createFile(atPath: directory + "/data/" + realName, contents: payload)
        }

        // What an honest read may return: the bytes the row names, of the row's size.
        let cache: DiskCache<Data>
        do {
            cache = try DiskCache<Data>(directory: directory, configuration: configuration)
        } catch {
            return  // a damaged manifest may refuse to open; a clear error is allowed
        }
        defer { cache.close() }
        let read: Data?
        do {
            read = try cache.value(forKey: "k")
        } catch {
            read = nil  // a StashError: allowed (the typed throw guarantees its type)
        }
        if let read {
            let expected: Data
            if inFile || renames {
                guard !renames || fuzzedName == realName else {
                    throw PropertyViolation("read \(read.count) bytes through a file name its row does not hold")
                }
                expected = rewritesFile ? payload : original
            } else {
                expected = nullsInline ? Data() : payload
            }
            guard read == expected else {
                throw PropertyViolation("read \(read.count) bytes that are not the \(expected.count) the row names")
            }
            guard fuzzesSize == false || Int64(read.count) == size else {
                throw PropertyViolation("read \(read.count) bytes where the row records \(size)")
            }
        }
        // The cache still works, and after a verification too.
        for step in ["after the read", "after verify()"] {
            if step == "after verify()" { _ = try? cache.verify() }
            do {
                try cache.setValue(Data(step.utf8), forKey: "other")
                guard try cache.value(forKey: "other") == Data(step.utf8) else {
                    throw PropertyViolation("another key does not read back \(step)")
                }
            } catch let violation as PropertyViolation {
                throw violation
            } catch {
                throw PropertyViolation("another key fails \(step): \(error)")
            }
        }
    }
}

/// Reads a fuzzer's input field by field; a field past the end reads as zeros.
struct FuzzedBytes {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func byte() -> UInt8 { bytes(1).first ?? 0 }

    mutating func int64() -> Int64 {
        bytes(8).enumerated().reduce(0) { $0 | Int64($1.element) << (8 * $1.offset) }
    }

    mutating func bytes(_ count: Int) -> ArraySlice<UInt8> {
        let end = min(offset + count, bytes.count)
        defer { offset = end }
        return bytes[offset..<end]
    }

    mutating func rest() -> ArraySlice<UInt8> { bytes(bytes.count - offset) }
}
