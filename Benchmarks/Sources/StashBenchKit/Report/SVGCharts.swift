import Foundation
import Stash

/// Hand-written SVG bar charts: no dependency, readable in a browser or on GitHub.
enum SVG {
    static let palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#7f7f7f", "#9467bd", "#8c564b"]

    /// A whole chart: a white page of `width` × `height` with `title` and
    /// `subtitle` at the top, then `body` (SVG elements).
    static func document(width: Double, height: Double, title: String, subtitle: String, body: String) -> String {
        """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif" font-size="12">
        <rect width="100%" height="100%" fill="white"/>
        <text x="10" y="22" font-size="16" font-weight="bold">\(escape(title))</text>
        <text x="10" y="42" fill="#555">\(escape(subtitle))</text>
        \(body)</svg>

        """
    }

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
        // Wide enough for the longest label at about 6.5 px per character of the 12 px font.
        let longest = groups.flatMap { $0.bars.map(\.label.count) }.max() ?? 0
        let width = 940.0, labelWidth = max(150.0, Double(longest) * 6.5 + 12), barArea = width - labelWidth - 260
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
        return document(width: width, height: height, title: title, subtitle: subtitle, body: body)
    }
}

extension SVG {
    struct Series {
        var label: String
        var color: String
        var values: [Double]
        var dashed = false
    }

    struct Panel {
        var title: String
        var series: [Series]
        /// Tick values on the (logarithmic) y axis, and how to print them.
        var ticks: [Double]
        var tickText: (Double) -> String
        /// A horizontal line drawn bold, such as 1.0 on a ratio axis.
        var reference: Double?
    }

    /// Line charts sharing one logarithmic x axis (`xs`, labelled `xLabels`), each
    /// panel with a logarithmic y axis spanning its ticks; vertical `markers` are
    /// drawn on every panel at x positions (same unit as `xs`).
    static func lineCharts(title: String, subtitle: String, xs: [Double], xLabels: [String], panels: [Panel],
                           markers: [(x: Double, label: String, color: String)]) -> String {
        let width = 940.0, left = 70.0, right = 200.0, panelHeight = 230.0, panelGap = 70.0, top = 70.0
        let plotWidth = width - left - right
        let (xMin, xMax) = (log(xs.first ?? 1), log(xs.last ?? 2))
        func x(_ value: Double) -> Double { left + plotWidth * (log(value) - xMin) / max(xMax - xMin, 1e-9) }
        var body = ""
        var y0 = top
        for panel in panels {
            let (yMin, yMax) = (log(panel.ticks.min() ?? 1), log(panel.ticks.max() ?? 2))
            func y(_ value: Double) -> Double {
                let clamped = min(max(log(value), yMin), yMax)
                return y0 + panelHeight - panelHeight * (clamped - yMin) / max(yMax - yMin, 1e-9)
            }
            body += "<text x=\"\(left)\" y=\"\(y0 - 10)\" font-weight=\"bold\">\(escape(panel.title))</text>\n"
            body += "<rect x=\"\(left)\" y=\"\(y0)\" width=\"\(plotWidth)\" height=\"\(panelHeight)\" fill=\"none\" stroke=\"#999\"/>\n"
            for tick in panel.ticks {
                let ty = fixed(y(tick), 1)
                let bold = panel.reference == tick
                body += "<line x1=\"\(left)\" y1=\"\(ty)\" x2=\"\(left + plotWidth)\" y2=\"\(ty)\" stroke=\"\(bold ? "#333" : "#ddd")\"\(bold ? " stroke-width=\"1.5\"" : "")/>\n"
                body += "<text x=\"\(left - 6)\" y=\"\(fixed(y(tick) + 4, 1))\" text-anchor=\"end\">\(escape(panel.tickText(tick)))</text>\n"
            }
            for (value, label) in zip(xs, xLabels) {
                let tx = fixed(x(value), 1)
                body += "<line x1=\"\(tx)\" y1=\"\(y0)\" x2=\"\(tx)\" y2=\"\(y0 + panelHeight)\" stroke=\"#eee\"/>\n"
                body += "<text x=\"\(tx)\" y=\"\(y0 + panelHeight + 16)\" text-anchor=\"middle\">\(escape(label))</text>\n"
            }
            for marker in markers {
                let mx = fixed(x(marker.x), 1)
                body += "<line x1=\"\(mx)\" y1=\"\(y0)\" x2=\"\(mx)\" y2=\"\(y0 + panelHeight)\" stroke=\"\(marker.color)\" stroke-dasharray=\"6 3\"/>\n"
            }
            for (index, series) in panel.series.enumerated() {
                let points = zip(xs, series.values).filter { $0.1 > 0 && $0.1.isFinite }
                    .map { "\(fixed(x($0.0), 1)),\(fixed(y($0.1), 1))" }.joined(separator: " ")
                body += "<polyline points=\"\(points)\" fill=\"none\" stroke=\"\(series.color)\" stroke-width=\"2\"\(series.dashed ? " stroke-dasharray=\"5 3\"" : "")/>\n"
                for (value, sample) in zip(xs, series.values) where sample > 0 && sample.isFinite {
                    body += "<circle cx=\"\(fixed(x(value), 1))\" cy=\"\(fixed(y(sample), 1))\" r=\"2.5\" fill=\"\(series.color)\"/>\n"
                }
                let ly = y0 + 14 + Double(index) * 18
                body += "<line x1=\"\(left + plotWidth + 14)\" y1=\"\(ly - 4)\" x2=\"\(left + plotWidth + 38)\" y2=\"\(ly - 4)\" stroke=\"\(series.color)\" stroke-width=\"2\"\(series.dashed ? " stroke-dasharray=\"5 3\"" : "")/>\n"
                body += "<text x=\"\(left + plotWidth + 44)\" y=\"\(ly)\">\(escape(series.label))</text>\n"
            }
            var my = y0 + 14 + Double(panel.series.count) * 18 + 8
            for marker in markers {
                body += "<line x1=\"\(left + plotWidth + 14)\" y1=\"\(my - 4)\" x2=\"\(left + plotWidth + 38)\" y2=\"\(my - 4)\" stroke=\"\(marker.color)\" stroke-dasharray=\"6 3\"/>\n"
                body += "<text x=\"\(left + plotWidth + 44)\" y=\"\(my)\">\(escape(marker.label))</text>\n"
                my += 18
            }
            y0 += panelHeight + panelGap
        }
        let height = y0 - panelGap + 40
        return document(width: width, height: height, title: title, subtitle: subtitle, body: body)
    }

    /// Ticks 1, 2, 5 × 10^k covering [low, high].
    static func decadeTicks(_ low: Double, _ high: Double) -> [Double] {
        guard low > 0, high >= low else { return [1, 10] }
        var ticks: [Double] = []
        var decade = pow(10, floor(log10(low)))
        while decade <= high * 10 {
            for step in [1.0, 2, 5] {
                let tick = decade * step
                ticks.append(tick)
            }
            decade *= 10
        }
        let first = ticks.lastIndex { $0 <= low } ?? 0
        let last = ticks.firstIndex { $0 >= high } ?? (ticks.count - 1)
        return Array(ticks[first...last])
    }
}

extension BenchReport {
    /// The crossover: time per value of each kind, and the file/inline ratios.
    public func crossoverSVG(_ run: DiskRun) -> String? {
        let summary = CrossoverSummary(phases: run.crossover)
        guard summary.rows.count >= 2 else { return nil }
        let xs = summary.rows.map { Double($0.size) }
        let labels = summary.rows.map { byteSizeText($0.size) }
        let times = summary.rows.flatMap { [$0.inlineWrite, $0.fileWrite, $0.inlineRead, $0.fileRead] }.map { $0 / 1000 }
        let ratios = summary.rows.flatMap { [$0.writeRatio, $0.readRatio, $0.combinedRatio, $0.readHeavyRatio] }
        var ratioTicks: [Double] = []
        var tick = pow(2, floor(log2(min(ratios.min() ?? 1, 1))))
        while tick < max(ratios.max() ?? 1, 1) * 2 {
            ratioTicks.append(tick)
            tick *= 2
        }
        let timePanel = SVG.Panel(
            title: "µs per value (log scale)",
            series: [
                SVG.Series(label: "inline write", color: SVG.palette[0], values: summary.rows.map { $0.inlineWrite / 1000 }),
                SVG.Series(label: "file write", color: SVG.palette[1], values: summary.rows.map { $0.fileWrite / 1000 }),
                SVG.Series(label: "inline read", color: SVG.palette[0], values: summary.rows.map { $0.inlineRead / 1000 }, dashed: true),
                SVG.Series(label: "file read", color: SVG.palette[1], values: summary.rows.map { $0.fileRead / 1000 }, dashed: true),
            ],
            ticks: SVG.decadeTicks(times.min() ?? 1, times.max() ?? 10),
            tickText: { $0 >= 1000 ? fixed($0 / 1000, 0) + " ms" : ($0 >= 1 ? fixed($0, 0) : fixed($0, 1)) + " µs" })
        let ratioPanel = SVG.Panel(
            title: "file time / inline time (log scale; below 1: files are cheaper)",
            series: [
                SVG.Series(label: "write", color: SVG.palette[2], values: summary.rows.map(\.writeRatio)),
                SVG.Series(label: "read", color: SVG.palette[3], values: summary.rows.map(\.readRatio)),
                SVG.Series(label: "1 write + 1 read", color: SVG.palette[5], values: summary.rows.map(\.combinedRatio), dashed: true),
                SVG.Series(label: "1 write + 4 reads", color: SVG.palette[6], values: summary.rows.map(\.readHeavyRatio), dashed: true),
            ],
            ticks: ratioTicks,
            tickText: { $0 >= 1 ? fixed($0, 0) + "x" : fixed($0, $0 >= 0.25 ? 2 : 3) + "x" },
            reference: 1)
        var markers: [(x: Double, label: String, color: String)] = [
            (Double(DiskStorageKind.defaultInlineThreshold), "current default \(byteSizeText(DiskStorageKind.defaultInlineThreshold))", "#7f7f7f"),
        ]
        if let recommendation = recommendedInlineThreshold {
            markers.append((Double(recommendation.bytes), "lower bound \(byteSizeText(recommendation.bytes))", "#d62728"))
        }
        return SVG.lineCharts(
            title: "DiskCache inline (.sqlite) vs file (.file) storage by value size (\(run.fileSystem))",
            subtitle: "Median of \(settings.runs) interleaved runs. Files cheaper from: \(summary.text).",
            xs: xs, xLabels: labels, panels: [timePanel, ratioPanel], markers: markers)
    }

    /// Throughput per memory workload phase (longer is faster; each group scaled to its fastest bar).
    public func memorySVG() -> String? {
        throughputSVG(memory, title: "Stash memory cache: throughput (median of \(settings.runs) interleaved runs)")
    }

    /// Throughput of DiskCache and the disk baselines per workload and phase.
    public func diskSVG(_ run: DiskRun) -> String? {
        throughputSVG(run.phases, title: "DiskCache and baselines: throughput (median of \(settings.runs) interleaved runs, \(run.fileSystem))",
                      groupTitle: { "\($0.workload.replacingOccurrences(of: "disk, ", with: "")): \($0.phase)" })
    }

    /// Throughput per phase of a section, longer is faster.
    func throughputSVG(_ phases: [PhaseResult], title: String, groupTitle: (PhaseResult) -> String = { $0.phase }) -> String? {
        guard !phases.isEmpty else { return nil }
        let legend = phases.first?.contenders.map { $0.contender + ($0.isFloor ? " (floor)" : "") } ?? []
        let groups = phases.map { phase in
            SVG.Group(title: groupTitle(phase), bars: phase.contenders.map { samples in
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
        let legend = PolicyName.allCases.map(\.rawValue) + ["best known", "OPT"]
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
