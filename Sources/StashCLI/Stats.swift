#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ArgumentParser
import Stash

struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a cache's entry count, size, inline and file counts, and access range.",
        discussion: """
            Prints aligned lines for people, or a JSON object with --json. Times are \
            ISO 8601 in UTC; they are null (or "none") in an empty cache. Sizes count \
            the values' bytes; manifest is what manifest.sqlite and its log take on disk.

            Example:
              $ stash stats ~/.cache/thumbnails
              $ stash stats --json ~/.cache/thumbnails | jq .count

            \(ExitStatus.helpText)
            """
    )

    @Flag(help: "Print a JSON object instead of aligned lines.")
    var json = false

    @Argument(help: "The cache's directory.")
    var directory: String

    func run() throws(CLIError) {
        let stats = try CacheAccess.withCache(directory) { cache throws(CLIError) in
            try CacheAccess.attempt("read the statistics of \(directory)") { () throws(StashError) in try cache.usage() }
        }
        let report = Report(directory: directory, stats: stats)
        print(json ? try report.json() : report.text())
    }

    /// What `stats` prints.
    struct Report: Encodable {
        var directory: String
        var count: Int
        var totalSize: Int
        var inlineCount: Int
        var fileCount: Int
        var oldestAccess: String?
        var newestAccess: String?
        var manifestBytes: Int

        init(directory: String, stats: DiskUsage) {
            self.directory = directory
            count = stats.count
            totalSize = stats.totalSize
            inlineCount = stats.inlineCount
            fileCount = stats.fileCount
            // The CLI opens caches with the default WallClock: nanoseconds since 1970.
            oldestAccess = stats.oldestAccessTime.map(Quantities.formatTimestamp(nanosecondsSince1970:))
            newestAccess = stats.newestAccessTime.map(Quantities.formatTimestamp(nanosecondsSince1970:))
            manifestBytes = stats.manifestBytes
        }

        enum CodingKeys: String, CodingKey {
            case directory, count, totalSize, inlineCount, fileCount, oldestAccess, newestAccess, manifestBytes
        }

        /// Writes every key, `null` included, so that the shape never changes.
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(directory, forKey: .directory)
            try container.encode(count, forKey: .count)
            try container.encode(totalSize, forKey: .totalSize)
            try container.encode(inlineCount, forKey: .inlineCount)
            try container.encode(fileCount, forKey: .fileCount)
            try container.encode(oldestAccess, forKey: .oldestAccess)
            try container.encode(newestAccess, forKey: .newestAccess)
            try container.encode(manifestBytes, forKey: .manifestBytes)
        }

        func json() throws(CLIError) -> String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            do {
                return String(decoding: try encoder.encode(self), as: UTF8.self)
            } catch {
                throw CLIError(.failure, "cannot encode the statistics as JSON: \(error)")
            }
        }

        func text() -> String {
            let rows: [(String, String)] = [
                ("directory", directory),
                ("entries", "\(count)"),
                ("total size", sizeText(totalSize)),
                ("inline", "\(inlineCount)"),
                ("in files", "\(fileCount)"),
                ("oldest access", oldestAccess ?? "none"),
                ("newest access", newestAccess ?? "none"),
                ("manifest", sizeText(manifestBytes)),
            ]
            let width = rows.map(\.0.count).max() ?? 0
            return rows.map { name, value in
                name + String(repeating: " ", count: width - name.count + 2) + value
            }.joined(separator: "\n")
        }

        private func sizeText(_ bytes: Int) -> String {
            bytes < 1_000 ? Quantities.formatBytes(bytes) : "\(Quantities.formatBytes(bytes)) (\(bytes) bytes)"
        }
    }
}
