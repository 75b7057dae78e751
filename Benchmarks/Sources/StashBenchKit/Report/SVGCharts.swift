import Foundation

/// Hand-written SVG bar charts: no dependency, readable in a browser or on GitHub.
enum SVG {
    static let palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#7f7f7f", "#9467bd", "#8c564b"]

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    struct Group {
        var title: String
        var bars: [(label: String, value: Double, text: String)]
    }

    /// Horizontal bars, grouped; each group scaled to `scale(group)`.
    static func horizontalBars(title: String, subtitle: String, groups: [Group], legend: [String],
                               scale: (Group) -> Double) -> String {
        let width = 940.0, labelWidth = 150.0, barArea = width - labelWidth - 260
        let barHeight = 16.0, barGap = 3.0, groupGap = 18.0, top = 64.0
        var y = top
        var body = ""
        for group in groups {
            body += "<text x=\"10\" y=\"\(y + 12)\" font-weight=\"bold\">\(escape(group.title))</text>\n"
            y += 18
            let maximum = max(scale(group), .leastNonzeroMagnitude)
            for (index, bar) in group.bars.enumerated() {
                let color = palette[(legend.firstIndex(of: bar.label) ?? index) % palette.count]
                let length = max(1, barArea * min(bar.value / maximum, 1))
                body += "<text x=\"\(labelWidth - 6)\" y=\"\(y + barHeight - 4)\" text-anchor=\"end\">\(escape(bar.label))</text>\n"
                body += "<rect x=\"\(labelWidth)\" y=\"\(y)\" width=\"\(fixed(length, 1))\" height=\"\(barHeight)\" fill=\"\(color)\"/>\n"
                body += "<text x=\"\(fixed(labelWidth + length + 5, 1))\" y=\"\(y + barHeight - 4)\">\(escape(bar.text))</text>\n"
                y += barHeight + barGap
            }
            y += groupGap
        }
        let height = y + 10
        return """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif" font-size="12">
        <rect width="100%" height="100%" fill="white"/>
        <text x="10" y="22" font-size="16" font-weight="bold">\(escape(title))</text>
        <text x="10" y="42" fill="#555">\(escape(subtitle))</text>
        \(body)</svg>

        """
    }
}

extension BenchReport {
    /// Throughput per memory workload phase (longer is faster; each group scaled to its fastest bar).
    public func memorySVG() -> String? {
        throughputSVG(memory, title: "Stash memory cache: throughput (median of \(settings.runs) interleaved runs)")
    }

    /// Throughput of the disk baselines per phase.
    public func diskSVG() -> String? {
        throughputSVG(disk, title: "Disk baselines: throughput (median of \(settings.runs) interleaved runs, \(diskFileSystem ?? "unknown file system"))")
    }

    /// Throughput per phase of a section, longer is faster.
    func throughputSVG(_ phases: [PhaseResult], title: String) -> String? {
        guard !phases.isEmpty else { return nil }
        let legend = phases.first?.contenders.map { $0.contender + ($0.isFloor ? " (floor)" : "") } ?? []
        let groups = phases.map { phase in
            SVG.Group(title: "\(phase.phase)", bars: phase.contenders.map { samples in
                let opsPerSecond = samples.medianOperationsPerSecond
                var text = opsPerSecond >= 100_000 ? fixed(opsPerSecond / 1e6, 2) + " Mops/s" : fixed(opsPerSecond / 1e3, 1) + " kops/s"
                if let floorName = phase.floorName, !samples.isFloor, let floor = phase.timeRatio(samples.contender, floorName) {
                    text += " (" + ratioText(floor) + " floor time)"
                }
                return (samples.contender + (samples.isFloor ? " (floor)" : ""), samples.medianOperationsPerSecond, text)
            })
        }
        return SVG.horizontalBars(
            title: title,
            subtitle: "Operations per second, longer is faster; each workload scaled to its fastest contender. \(machine.cores) cores, \(machine.swiftVersion.replacingOccurrences(of: "Swift version ", with: "Swift ").components(separatedBy: " (").first ?? "")",
            groups: groups, legend: legend, scale: { $0.bars.map(\.value).max() ?? 1 })
    }

    /// Hit ratio per trace and capacity, on one 0-100% scale.
    public func hitRatioSVG() -> String? {
        guard !hitRatio.isEmpty else { return nil }
        let legend = ["LRU", "FIFO", "LFU", "best known", "OPT"]
        let groups = hitRatio.map { row in
            var bars: [(String, Double, String)] = []
            for policy in PolicyName.allCases {
                if let value = row.stash[policy.rawValue] { bars.append((policy.rawValue, value, twoDecimals(value) + " %")) }
            }
            bars.append(("best known", row.readme.bestKnown, twoDecimals(row.readme.bestKnown) + " % (\(row.readme.bestKnownPolicy), README)"))
            bars.append(("OPT", row.opt, twoDecimals(row.opt) + " % (Belady)"))
            return SVG.Group(title: "\(row.trace) @ \(row.capacity)", bars: bars)
        }
        return SVG.horizontalBars(
            title: "Stash MemoryCache hit ratio on real traces",
            subtitle: "Percent of requests that hit, 0-100% scale; every request counts; capacity in entries.",
            groups: groups, legend: legend, scale: { _ in 100 })
    }
}
