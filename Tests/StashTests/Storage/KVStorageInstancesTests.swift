import Foundation
import Testing
@testable import Stash

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Several `KVStorage` instances on one directory, as the background consistency
/// check of a disk cache makes them (it opens an instance of its own).
@Suite struct KVStorageInstancesTests {
    /// A consistency check whose `data/` listing is overtaken by another
    /// instance's removeAll (which moves data/ to the trash and creates a new one)
    /// followed by a write: the check must not take the new row for one whose file
    /// is missing (it would delete it, and its file would be left an orphan).
    @Test func aCheckOvertakenByRemoveAllKeepsRowsWrittenSince() throws {
        let fixture = try StorageFixture()
        let checker = try fixture.open(kind: .file)
        let other = try fixture.open(kind: .file)
        for index in 0..<4 {
            try other.setValue(testBytes(30, seed: UInt8(index)), forKey: "old-\(index)")
        }
        var hookRuns = 0
        let report = try checker.checkConsistency(afterListing: {
            hookRuns += 1
            // Between the check's listing and its transaction.
            try? other.removeAll()
            try? other.setValue(testBytes(40, seed: 9), forKey: "new")
        })
        #expect(hookRuns == 1)
        #expect(report.isClean, "\(report)")
        #expect(try other.value(forKey: "new")?.value == testBytes(40, seed: 9))
        #expect(try checker.value(forKey: "new")?.value == testBytes(40, seed: 9))
        #expect(try checker.totalCount() == 1)
        #expect(fixture.dataFiles().count == 1)
        #expect(try checker.checkConsistency().isClean)
    }
}
