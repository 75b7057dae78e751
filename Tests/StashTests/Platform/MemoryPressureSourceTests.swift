import Foundation
import Testing
@testable import Stash

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

private typealias Source = LinuxMemoryPressureSource

@Suite(.timeLimit(.minutes(5))) struct MemoryPressureParserTests {
    // MARK: PSI

    @Test func psiSomeAvg10() {
        let text = """
            some avg10=12.34 avg60=5.00 avg300=1.25 total=987654
            full avg10=3.00 avg60=1.00 avg300=0.00 total=12345

            """
        #expect(Source.parsePSISomeAvg10(text) == 12.34)
    }

    @Test func psiIdleMachineAndOrderOfLines() {
        #expect(Source.parsePSISomeAvg10("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n") == 0)
        let fullFirst = "full avg10=99.00 avg60=0 avg300=0 total=1\nsome avg60=1.00 avg10=7.50 total=2\n"
        #expect(Source.parsePSISomeAvg10(fullFirst) == 7.5)
    }

    @Test(arguments: [
        "",
        "garbage",
        "full avg10=3.00 avg60=1.00 avg300=0.00 total=12345",
        "some avg60=1.00 avg300=0.00 total=1",
        "some avg10=abc avg60=1.00",
        "some avg10= avg60=1.00",
        "some avg10=-1.00 avg60=1.00",
        "some avg10=nan avg60=1.00",
        "something avg10=5.00",
    ])
    func psiMalformedIsNil(_ text: String) {
        #expect(Source.parsePSISomeAvg10(text) == nil)
    }

    // MARK: cgroup numbers

    @Test func byteCounts() {
        #expect(Source.parseCgroupBytes("404852736\n") == 404_852_736)
        #expect(Source.parseCgroupBytes("  0 ") == 0)
    }

    @Test(arguments: ["", "\n", "abc", "-5", "12 34", "1.5", "99999999999999999999999"])
    func malformedByteCountsAreNil(_ text: String) {
        #expect(Source.parseCgroupBytes(text) == nil)
    }

    @Test func v1Limit() {
        #expect(Source.parseCgroupV1Limit("9223372036854771712\n") == .unlimited)
        #expect(Source.parseCgroupV1Limit("9223372036854775807\n") == .unlimited)
        #expect(Source.parseCgroupV1Limit("536870912\n") == .bytes(536_870_912))
        #expect(Source.parseCgroupV1Limit("max\n") == nil)
        #expect(Source.parseCgroupV1Limit("") == nil)
    }

    @Test func v2Limit() {
        #expect(Source.parseCgroupV2Limit("max\n") == .unlimited)
        #expect(Source.parseCgroupV2Limit("1073741824\n") == .bytes(1_073_741_824))
        #expect(Source.parseCgroupV2Limit("maximum\n") == nil)
        #expect(Source.parseCgroupV2Limit("-1\n") == nil)
        #expect(Source.parseCgroupV2Limit("") == nil)
    }

    @Test func v2EventsSumHighMaxOom() {
        let text = """
            low 4
            high 12
            max 3
            oom 1
            oom_kill 7
            oom_group_kill 0

            """
        #expect(Source.parseMemoryEvents(text) == 16)
        #expect(Source.parseMemoryEvents("high 0\nmax 0\noom 0\n") == 0)
    }

    @Test(arguments: ["", "low 3\noom_kill 2\n", "high x\nmax 1\n", "max -1\n", "garbage"])
    func malformedEventsAreNil(_ text: String) {
        #expect(Source.parseMemoryEvents(text) == nil)
    }

    // MARK: /proc/self/cgroup

    @Test func procSelfCgroupHybrid() {
        let text = """
            9:name=systemd:/
            4:memory:/process_api/2e137b1a
            2:cpu,cpuacct:/
            0::/

            """
        #expect(Source.parseProcSelfCgroup(text) == [
            CgroupMembership(hierarchyID: 9, controllers: ["name=systemd"], path: "/"),
            CgroupMembership(hierarchyID: 4, controllers: ["memory"], path: "/process_api/2e137b1a"),
            CgroupMembership(hierarchyID: 2, controllers: ["cpu", "cpuacct"], path: "/"),
            CgroupMembership(hierarchyID: 0, controllers: [], path: "/"),
        ])
    }

    @Test func procSelfCgroupV2AndMalformedLines() {
        let text = "garbage\nx::/a\n3:memory\n0::relative\n0::/system.slice/app:1.service\n"
        #expect(Source.parseProcSelfCgroup(text) == [
            CgroupMembership(hierarchyID: 0, controllers: [], path: "/system.slice/app:1.service")
        ])
        #expect(Source.parseProcSelfCgroup("").isEmpty)
    }

    // MARK: Locating the cgroup

    @Test func locatesOwnV2Cgroup() {
        let files = Source.locateCgroupMemoryFiles(
            procSelfCgroup: "0::/system.slice/app.service\n",
            cgroupRoot: "/sys/fs/cgroup/",
            isReadable: { $0 == "/sys/fs/cgroup/system.slice/app.service/memory.current" }
        )
        #expect(files == CgroupMemoryFiles(version: .v2, directory: "/sys/fs/cgroup/system.slice/app.service"))
        #expect(files?.limitPath == "/sys/fs/cgroup/system.slice/app.service/memory.max")
        #expect(files?.eventsPath == "/sys/fs/cgroup/system.slice/app.service/memory.events")
    }

    @Test func fallsBackToV2RootWhenOwnDirectoryIsHidden() {
        // In a container with a cgroup namespace the host path is not mounted.
        let files = Source.locateCgroupMemoryFiles(
            procSelfCgroup: "0::/kubepods/pod1/abc\n",
            cgroupRoot: "/sys/fs/cgroup",
            isReadable: { $0 == "/sys/fs/cgroup/memory.current" }
        )
        #expect(files == CgroupMemoryFiles(version: .v2, directory: "/sys/fs/cgroup"))
    }

    @Test func pathOutsideTheNamespaceUsesTheRoot() {
        var probed: [String] = []
        let files = Source.locateCgroupMemoryFiles(
            procSelfCgroup: "0::/../../other\n",
            cgroupRoot: "/sys/fs/cgroup",
            isReadable: { probed.append($0); return true }
        )
        #expect(files == CgroupMemoryFiles(version: .v2, directory: "/sys/fs/cgroup"))
        #expect(probed == ["/sys/fs/cgroup/memory.current"])
    }

    @Test func hybridPrefersV1MemoryController() {
        let text = "4:memory:/process_api/abc\n0::/\n"
        let files = Source.locateCgroupMemoryFiles(
            procSelfCgroup: text,
            cgroupRoot: "/sys/fs/cgroup",
            isReadable: { $0.hasSuffix("/memory.usage_in_bytes") }
        )
        #expect(files == CgroupMemoryFiles(version: .v1, directory: "/sys/fs/cgroup/memory/process_api/abc"))
        #expect(files?.usagePath == "/sys/fs/cgroup/memory/process_api/abc/memory.usage_in_bytes")
        #expect(files?.limitPath == "/sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes")
        #expect(files?.eventsPath == nil)

        let rootOnly = Source.locateCgroupMemoryFiles(
            procSelfCgroup: text,
            cgroupRoot: "/sys/fs/cgroup",
            isReadable: { $0 == "/sys/fs/cgroup/memory/memory.usage_in_bytes" }
        )
        #expect(rootOnly == CgroupMemoryFiles(version: .v1, directory: "/sys/fs/cgroup/memory"))
    }

    @Test func withoutProcSelfCgroupTriesBothRoots() {
        var probed: [String] = []
        let files = Source.locateCgroupMemoryFiles(
            procSelfCgroup: nil,
            cgroupRoot: "/cg",
            isReadable: { probed.append($0); return $0 == "/cg/memory/memory.usage_in_bytes" }
        )
        #expect(files == CgroupMemoryFiles(version: .v1, directory: "/cg/memory"))
        #expect(probed == ["/cg/memory.current", "/cg/memory/memory.usage_in_bytes"])
    }

    @Test func nothingReadableIsNil() {
        let files = Source.locateCgroupMemoryFiles(
            procSelfCgroup: "0::/a\n", cgroupRoot: "/sys/fs/cgroup", isReadable: { _ in false })
        #expect(files == nil)
    }

    @Test func usageRatio() {
        #expect(MemoryPressureReading(cgroupUsageBytes: 900, cgroupLimitBytes: 1000).cgroupUsageRatio == 0.9)
        #expect(MemoryPressureReading(cgroupUsageBytes: 900).cgroupUsageRatio == nil)
        #expect(MemoryPressureReading(cgroupLimitBytes: 1000).cgroupUsageRatio == nil)
        #expect(MemoryPressureReading(cgroupUsageBytes: 1, cgroupLimitBytes: 0).cgroupUsageRatio == nil)
    }
}

@Suite(.timeLimit(.minutes(5))) struct MemoryPressureLinuxSourceTests {
    /// A throwaway directory tree standing in for /proc and /sys/fs/cgroup.
    /// Call `remove()` when done (in a `defer`).
    private struct FakeFileSystem {
        let directory: TemporaryDirectory
        var root: String { directory.path }

        init() throws {
            directory = try TemporaryDirectory(prefix: "stash-pressure")
        }

        func remove() {
            directory.remove()
        }

        func write(_ contents: String, to relativePath: String) throws {
            let path = root + "/" + relativePath
            let directory = (path as NSString).deletingLastPathComponent
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try contents.write(toFile: path, atomically: true, encoding: .utf8)
        }
    }

    @Test func readsAV2Tree() throws {
        let fs = try FakeFileSystem()
        defer { fs.remove() }
        try fs.write("some avg10=42.50 avg60=1.00 avg300=0.00 total=9\nfull avg10=1.00 avg60=0 avg300=0 total=1\n",
                     to: "proc/pressure/memory")
        try fs.write("0::/app.slice\n", to: "proc/self/cgroup")
        try fs.write("950\n", to: "cgroup/app.slice/memory.current")
        try fs.write("1000\n", to: "cgroup/app.slice/memory.max")
        try fs.write("low 0\nhigh 2\nmax 1\noom 0\noom_kill 0\n", to: "cgroup/app.slice/memory.events")

        let source = LinuxMemoryPressureSource(procRoot: fs.root + "/proc", cgroupRoot: fs.root + "/cgroup")
        #expect(source.cgroupFiles == CgroupMemoryFiles(version: .v2, directory: fs.root + "/cgroup/app.slice"))
        #expect(source.read() == MemoryPressureReading(
            psiSomeAvg10: 42.5, cgroupUsageBytes: 950, cgroupLimitBytes: 1000, cgroupEventCount: 3))

        try fs.write("max\n", to: "cgroup/app.slice/memory.max")
        try fs.write("garbage\n", to: "cgroup/app.slice/memory.events")
        #expect(source.read() == MemoryPressureReading(psiSomeAvg10: 42.5, cgroupUsageBytes: 950))
    }

    @Test func readsAV1TreeAndToleratesMissingFiles() throws {
        let fs = try FakeFileSystem()
        defer { fs.remove() }
        try fs.write("4:memory:/job\n0::/\n", to: "proc/self/cgroup")
        try fs.write("404852736\n", to: "cgroup/memory/job/memory.usage_in_bytes")
        try fs.write("9223372036854771712\n", to: "cgroup/memory/job/memory.limit_in_bytes")

        // No proc/pressure/memory: PSI is simply absent, as on kernels without PSI.
        let source = LinuxMemoryPressureSource(procRoot: fs.root + "/proc", cgroupRoot: fs.root + "/cgroup")
        #expect(source.cgroupFiles?.version == .v1)
        #expect(source.read() == MemoryPressureReading(cgroupUsageBytes: 404_852_736))
        // Reading again after the failure was reported once still works.
        #expect(source.read() == MemoryPressureReading(cgroupUsageBytes: 404_852_736))
    }

    @Test func emptyTreeReadsNothing() throws {
        let fs = try FakeFileSystem()
        defer { fs.remove() }
        let source = LinuxMemoryPressureSource(procRoot: fs.root + "/proc", cgroupRoot: fs.root + "/cgroup")
        #expect(source.cgroupFiles == nil)
        #expect(source.read() == MemoryPressureReading())
    }

    #if os(Linux)
    @Test func readsThisMachine() throws {
        let source = LinuxMemoryPressureSource()
        let reading = source.read()
        if access("/proc/pressure/memory", R_OK) == 0 {
            let psi = try #require(reading.psiSomeAvg10)
            #expect((0...100).contains(psi))
        }
        if let files = source.cgroupFiles {
            #expect(access(files.usagePath, R_OK) == 0)
            #expect((reading.cgroupUsageBytes ?? 0) > 0)
        }
        if let limit = reading.cgroupLimitBytes {
            #expect(limit > 0 && limit < LinuxMemoryPressureSource.unlimitedThreshold)
        }
    }
    #endif

    @Test func readSmallFileReadsPseudoFilesAndFailsQuietly() {
        #expect(readSmallFile(atPath: "/nonexistent/stash/file") == nil)
        #if os(Linux)
        // A pseudo-file whose stat size is 0 but which has contents.
        #expect(readSmallFile(atPath: "/proc/self/stat")?.isEmpty == false)
        #endif
    }
}
