import Foundation

/// One trace at one capacity: every policy's hit ratio beside the README's.
public struct HitRatioRow: Sendable, Codable {
    public var trace: String
    public var capacity: Int
    public var requests: Int
    public var uniqueKeys: Int
    /// Stash's MemoryCache hit ratio (percent) per policy name ("LRU", "FIFO", "LFU").
    public var stash: [String: Double]
    /// The benchmark's own textbook LRU and FIFO, and its OPT (Belady).
    public var referenceLRU: Double
    public var referenceFIFO: Double
    public var opt: Double
    public var readme: TraceReference

    public var stashLRUMatchesReadme: Bool? {
        stash[PolicyName.lru.rawValue].map { twoDecimals($0) == twoDecimals(readme.lru) }
    }
    public var referenceLRUMatchesReadme: Bool { twoDecimals(referenceLRU) == twoDecimals(readme.lru) }
    public var referenceFIFOMatchesReadme: Bool { twoDecimals(referenceFIFO) == twoDecimals(readme.fifo) }
    public var optMatchesReadme: Bool { twoDecimals(opt) == twoDecimals(readme.opt) }
}

/// Replays every trace named in `<directory>/README.md` at each of its listed
/// capacities through MemoryCache once per policy (on a miss: set), the
/// benchmark's reference LRU and FIFO, and OPT. Every request counts.
public func runHitRatio(tracesDirectory: String, policies: [PolicyName], progress: ProgressHandler?) throws -> [HitRatioRow] {
    let readmePath = (tracesDirectory as NSString).appendingPathComponent("README.md")
    guard let readmeData = FileManager.default.contents(atPath: readmePath),
          let readme = String(data: readmeData, encoding: .utf8) else {
        throw BenchError("cannot read \(readmePath): pass the traces folder with --traces PATH")
    }
    let references = try TraceReference.parse(readme: readme)
    var traces: [String: Trace] = [:]
    var rows: [HitRatioRow] = []
    for reference in references {
        let trace: Trace
        if let loaded = traces[reference.trace] {
            trace = loaded
        } else {
            let path = (tracesDirectory as NSString).appendingPathComponent("\(reference.trace).txt")
            progress?("hit ratio: reading \(path)")
            trace = try Trace.load(path: path, name: reference.trace)
            traces[reference.trace] = trace
        }
        let label = "\(reference.trace) @ \(reference.capacity)"
        let requests = trace.keys.count
        var stash: [String: Double] = [:]
        for policy in policies {
            progress?("hit ratio: \(label), MemoryCache \(policy.rawValue)")
            stash[policy.rawValue] = hitPercent(
                hits: stashReplayHits(trace: trace.keys, capacity: reference.capacity, policy: policy),
                requests: requests)
        }
        progress?("hit ratio: \(label), reference LRU and FIFO, OPT")
        var lru = ReferenceLRU<Int>(capacity: reference.capacity)
        var fifo = ReferenceFIFO<Int>(capacity: reference.capacity)
        var lruHits = 0, fifoHits = 0
        for key in trace.keys {
            if lru.access(key) { lruHits += 1 }
            if fifo.access(key) { fifoHits += 1 }
        }
        let optHits = beladyHits(trace: trace.keys, capacity: reference.capacity)
        rows.append(HitRatioRow(
            trace: reference.trace, capacity: reference.capacity, requests: requests,
            uniqueKeys: trace.uniqueKeyCount, stash: stash,
            referenceLRU: hitPercent(hits: lruHits, requests: requests),
            referenceFIFO: hitPercent(hits: fifoHits, requests: requests),
            opt: hitPercent(hits: optHits, requests: requests), readme: reference))
    }
    return rows
}
