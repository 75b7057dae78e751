import BenchSupport
import Foundation

extension ContentionReport {
    /// The table as Markdown (also the text output): best and median Mops/s per
    /// contender and thread count, each thread count's median ÷ one thread's,
    /// and the hit percentage.
    public func markdown() -> String {
        var text = "### Contention (issue #26): throughput against threads sharing one cache\n\n"
        text += "Each thread runs \(plan.operationsPerThread.formatted()) operations of its own seeded Zipf(0.99) stream over "
        text += "\(plan.keyCount.formatted()) `Int` keys on one shared cache (countLimit \(plan.countLimit.formatted()) for "
        text += "MemoryCache; the floors have no limit); a get that misses is followed by a set. Mops/s = all threads' "
        text += "operations / wall time from the first start to the last end; best and median of \(plan.rounds) rounds, "
        text += "every contender and thread count interleaved in each round. Load average \(loadAverageAtStart) at start, "
        text += "\(loadAverageAtEnd) at end.\n\n"
        for mix in mixes {
            text += "#### \(mix.name): \(100 - mix.setPercent) % get (miss → set), \(mix.setPercent) % set\n\n"
            text += "| contender | threads | best Mops/s | median Mops/s | median ÷ 1 thread | ÷ striped floor, same threads | hit % |\n"
            text += "|---|---:|---:|---:|---:|---:|---:|\n"
            for contender in contenderNames {
                for threads in plan.threadCounts {
                    guard let figure = figure(mix.name, contender, threads) else { continue }
                    let one = self.figure(mix.name, contender, 1)?.median ?? 0
                    let striped = self.figure(mix.name, ContendedStripedDictionary.displayName, threads)?.median ?? 0
                    let hit = figure.hitPercent.isEmpty ? 0 : BenchSupport.median(figure.hitPercent)
                    text += "| \(contender) | \(threads) | \(fixed(figure.best, 2)) | \(fixed(figure.median, 2)) | "
                    text += "\(fixed(figure.median / max(one, 1e-9), 2))× | \(striped > 0 ? fixed(figure.median / striped, 2) + "×" : "–") | "
                    text += "\(fixed(hit, 1)) |\n"
                }
            }
            text += "\n"
        }
        if let diskReads { text += diskReads.markdown() }
        return text
    }

    /// Contenders in the order they ran.
    var contenderNames: [String] {
        var names: [String] = []
        for figure in figures where !names.contains(figure.contender) { names.append(figure.contender) }
        return names
    }

    /// A line chart per mix: median Mops/s against threads (both axes logarithmic).
    public func svg() -> String {
        let colors = ["MemoryCache": SVG.palette[0], "Dictionary+lock": SVG.palette[4],
                      "64 × Dictionary+lock": SVG.palette[2], "MemoryCache<String>": SVG.palette[1],
                      "Cache (memory tier)": SVG.palette[3]]
        let allMedians = figures.map(\.median).filter { $0 > 0 }
        let low = max(0.5, (allMedians.min() ?? 1) * 0.8), high = (allMedians.max() ?? 10) * 1.2
        var ticks: [Double] = []
        var tick = pow(2, floor(log2(low)))
        while tick <= high * 2 {
            ticks.append(tick)
            tick *= 2
        }
        let panels = mixes.map { mix in
            SVG.Panel(
                title: "\(mix.name): \(100 - mix.setPercent) % get (miss → set), \(mix.setPercent) % set — median Mops/s",
                series: contenderNames.map { name in
                    SVG.Series(label: name, color: colors[name] ?? SVG.palette[5],
                               values: plan.threadCounts.map { figure(mix.name, name, $0)?.median ?? 0 },
                               dashed: name != ContendedMemoryCache.displayName)
                },
                ticks: ticks, tickText: { fixed($0, $0 < 1 ? 2 : 0) }, reference: nil)
        }
        return SVG.lineCharts(
            title: "Throughput against threads sharing one cache (issue #26)",
            subtitle: "Zipf(0.99) over \(plan.keyCount.formatted()) keys, \(plan.operationsPerThread.formatted()) ops per thread, median of \(plan.rounds) rounds; this machine has \(ProcessInfo.processInfo.activeProcessorCount) cores",
            xs: plan.threadCounts.map(Double.init), xLabels: plan.threadCounts.map { "\($0) threads" },
            panels: panels, markers: [])
    }
}
