#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ArgumentParser
import Stash

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a cache's manifest against its files and repair what disagrees.",
        discussion: """
            Removes files in data/ that no entry refers to (once they are an hour \
            old, so that a write in progress elsewhere is safe), and entries whose \
            file is missing or damaged, and recomputes the \
            totals if they drifted. Prints each count and a summary line. Exits with \
            status 0 when the cache is consistent afterwards, including when \
            something was repaired.

            Example:
              $ stash verify ~/.cache/thumbnails

            \(ExitStatus.helpText)
            """
    )

    @Argument(help: "The cache's directory.")
    var directory: String

    func run() throws(CLIError) {
        try CacheAccess.check(directory, .existingCache)
        // Not through CacheAccess.withCache: opening a DiskCache schedules this
        // same check in the background, which could repair things unreported.
        let setAsideBefore = Self.setAsideManifests(in: directory)
        var report: RepairReport
        do {
            report = try DiskCache<Data>.verify(directory: directory, logger: CacheLog.logger)
        } catch {
            throw CLIError(error, doing: "verify \(directory)")
        }
        // A manifest too damaged to open is set aside while opening, before the
        // check runs, so the report does not count it: a new copy set aside does.
        if !Self.setAsideManifests(in: directory).subtracting(setAsideBefore).isEmpty {
            report.manifestReset = true
        }
        print(Self.text(report))
    }

    /// The names of the damaged manifests the cache has set aside.
    private static func setAsideManifests(in directory: String) -> Set<String> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return Set(names.filter { $0.hasPrefix("\(CacheAccess.manifestName).corrupt-") })
    }

    static func text(_ report: RepairReport) -> String {
        let rows: [(String, String)] = [
            ("orphan files removed", "\(report.orphanFilesRemoved)"),
            ("unexpected entries removed", "\(report.unexpectedEntriesRemoved)"),
            ("entries with missing files removed", "\(report.missingFileEntriesRemoved)"),
            ("damaged entries removed", "\(report.damagedEntriesRemoved)"),
            ("totals recomputed", report.totalsCorrected ? "yes" : "no"),
            ("manifest reset", report.manifestReset ? "yes" : "no"),
        ]
        let width = rows.map(\.0.count).max() ?? 0
        var lines = rows.map { name, value in name + String(repeating: " ", count: width - name.count + 2) + value }
        lines.append(report.isClean ? "consistent: nothing to repair" : "repaired: \(report)")
        return lines.joined(separator: "\n")
    }
}
