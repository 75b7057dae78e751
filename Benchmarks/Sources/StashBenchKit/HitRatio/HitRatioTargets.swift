import Foundation

/// Issue #14's hit-ratio targets for ``PolicyName/s3fifo``, checked against the
/// trace replay.
public enum HitRatioTargets {
    /// The cells where LRU fails worst, and the hit ratio (percent) the policy must reach there.
    public static let cellFloors: [(trace: String, capacity: Int, floor: Double)] = [
        ("gli", 1000, 50), ("loop", 512, 49), ("multi2", 2000, 69), ("web12", 1200, 70.5),
    ]
    /// The least mean, over every cell, of (policy - best known), in points.
    public static let meanGapFloor = -0.4
    /// The most any cell may fall under LRU, in points; and the stretch.
    public static let underLRULimit = 1.5
    public static let underLRUStretch = 1.0
    /// Stretch: every cell at or above best known minus this, in points.
    public static let underBestStretch = 0.5

    /// The policy the targets are for.
    public static let policy = PolicyName.s3fifo
}

/// One checked hit-ratio target.
public struct HitRatioCheck: Sendable, Codable {
    public var target: String
    public var value: String
    public var limit: String
    public var passed: Bool
    /// Enforced by `--strict`: the required targets (the four cells, the mean
    /// gap, the 1.5-point limit under LRU). A stretch target is reported and
    /// not enforced (see docs/benchmarks.md).
    public var enforced: Bool
}

extension HitRatioRow {
    /// The policy's hit ratio minus LRU's, and minus the best known value, in points.
    public var gapToLRU: Double? { policyValue.flatMap { value in stash[PolicyName.lru.rawValue].map { value - $0 } } }
    public var gapToBest: Double? { policyValue.map { $0 - readme.bestKnown } }
    var policyValue: Double? { stash[HitRatioTargets.policy.rawValue] }
}

/// Checks the targets against replayed rows. Stretch goals are not enforced.
public func checkHitRatioTargets(_ rows: [HitRatioRow]) -> [HitRatioCheck] {
    let name = HitRatioTargets.policy.rawValue
    guard rows.contains(where: { $0.policyValue != nil }) else { return [] }
    var checks: [HitRatioCheck] = []
    for cell in HitRatioTargets.cellFloors {
        guard let row = rows.first(where: { $0.trace == cell.trace && $0.capacity == cell.capacity }),
              let value = row.policyValue else { continue }
        checks.append(HitRatioCheck(target: "\(name) on \(cell.trace) @ \(cell.capacity)", value: twoDecimals(value),
                                    limit: ">= \(cell.floor)", passed: value >= cell.floor, enforced: true))
    }
    let gaps = rows.compactMap(\.gapToBest)
    let meanGap = gaps.reduce(0, +) / Double(max(gaps.count, 1))
    checks.append(HitRatioCheck(target: "\(name): mean gap to best known over \(gaps.count) cells",
                                value: signedPoints(meanGap), limit: ">= \(signedPoints(HitRatioTargets.meanGapFloor))",
                                passed: meanGap >= HitRatioTargets.meanGapFloor, enforced: true))
    let underLRU = rows.compactMap { row in row.gapToLRU.map { (row, $0) } }.min { $0.1 < $1.1 }
    if let (row, gap) = underLRU {
        for (limit, stretch) in [(HitRatioTargets.underLRULimit, false), (HitRatioTargets.underLRUStretch, true)] {
            checks.append(HitRatioCheck(
                target: "\(name): never more than \(limit) points under LRU\(stretch ? " (stretch)" : "") (worst: \(row.trace) @ \(row.capacity))",
                value: signedPoints(gap), limit: ">= \(signedPoints(-limit))", passed: gap >= -limit, enforced: !stretch))
        }
    }
    let underBest = rows.compactMap { row in row.gapToBest.map { (row, $0) } }.min { $0.1 < $1.1 }
    if let (row, gap) = underBest {
        checks.append(HitRatioCheck(
            target: "\(name): every cell within \(HitRatioTargets.underBestStretch) of best known (stretch) (worst: \(row.trace) @ \(row.capacity))",
            value: signedPoints(gap), limit: ">= \(signedPoints(-HitRatioTargets.underBestStretch))",
            passed: gap >= -HitRatioTargets.underBestStretch, enforced: false))
    }
    return checks
}

/// A difference in percentage points with its sign, two decimals.
func signedPoints(_ value: Double) -> String {
    String(format: "%+.2f", value)
}

extension BenchReport {
    /// The new policy beside LRU, the best known value and OPT, per cell.
    public func policyComparisonTable() -> Table? {
        let name = HitRatioTargets.policy.rawValue
        guard hitRatio.contains(where: { $0.policyValue != nil }) else { return nil }
        let rows: [[String]] = hitRatio.map { row in
            let floor = HitRatioTargets.cellFloors.first { $0.trace == row.trace && $0.capacity == row.capacity }
            var cellVerdict = "-"
            if let floor, let value = row.policyValue {
                cellVerdict = (value >= floor.floor ? "PASS" : "FAIL") + " (>= \(floor.floor))"
            }
            let underLRU = row.gapToLRU.map { $0 >= -HitRatioTargets.underLRULimit ? "PASS" : "FAIL" } ?? "-"
            let nearBest = row.gapToBest.map { $0 >= -HitRatioTargets.underBestStretch ? "PASS" : "FAIL" } ?? "-"
            return ["\(row.trace) @ \(row.capacity)",
                    row.policyValue.map(twoDecimals) ?? "-",
                    row.stash[PolicyName.lru.rawValue].map(twoDecimals) ?? "-",
                    "\(twoDecimals(row.readme.bestKnown)) (\(row.readme.bestKnownPolicy))",
                    twoDecimals(row.opt),
                    row.gapToLRU.map(signedPoints) ?? "-",
                    row.gapToBest.map(signedPoints) ?? "-",
                    cellVerdict,
                    underLRU, nearBest]
        }
        let gaps = hitRatio.compactMap(\.gapToBest)
        return Table(
            title: "Hit ratio (%) of MemoryCache \(name) beside LRU, the best known value and OPT",
            headers: ["trace @ capacity", name, "LRU", "best known (README)", "OPT", "vs LRU", "vs best",
                      "cell target", "<= 1.5 under LRU", "within 0.5 of best (stretch)"],
            alignments: [.left, .right, .right, .right, .right, .right, .right, .left, .left, .left],
            rows: rows,
            notes: ["Mean gap to best known over \(gaps.count) cells: \(signedPoints(gaps.reduce(0, +) / Double(max(gaps.count, 1)))) points."])
    }

    /// Every hit-ratio target with PASS/FAIL, and whether `--strict` enforces it.
    public func hitRatioTargetsTable() -> Table? {
        let checks = checkHitRatioTargets(hitRatio)
        guard !checks.isEmpty else { return nil }
        return Table(
            title: "Hit-ratio targets (issue #14)",
            headers: ["target", "value", "limit", "result", "--strict"],
            alignments: [.left, .right, .right, .left, .left],
            rows: checks.map { [$0.target, $0.value, $0.limit, $0.passed ? "PASS" : "FAIL", $0.enforced ? "enforced" : "reported"] },
            notes: ["--strict fails on an enforced target that fails; the stretch goals are reported."])
    }
}

extension BenchReport {
    /// What the page says about `.s3FIFO` below its tables: the design in brief,
    /// what its eviction order means, the targets it misses and why, and its
    /// memory and speed beside LRU from this report's own figures.
    public func policyDiscussionMarkdown() -> String? {
        let name = HitRatioTargets.policy.rawValue
        let checks = checkHitRatioTargets(hitRatio)
        guard !checks.isEmpty else { return nil }
        var out = """
        ### \(name): `EvictionPolicy.s3FIFO`, the default

        S3-FIFO (Yang et al., SOSP '23) with a small queue sized by marginal hits. New keys enter a small FIFO \
        queue; one that is read twice there (a 2-bit counter, capped at 3) moves on to the main FIFO queue, others \
        leave and their 32-bit key hash goes to a ghost FIFO of 0.9 × capacity hashes; a key whose hash the ghost \
        remembers enters the main queue directly. The main queue evicts its oldest entry whose counter is 0, \
        decrementing and requeueing the others (amortised O(1)). A hit only bumps the counter. A shadow FIFO \
        remembers the hashes of the last w = 0.1 × capacity evictions from the main queue. The small queue starts \
        at one entry and moves by one entry of capacity per marginal hit: a new key the ghost remembers from fewer \
        than w evictions ago would have hit in a small queue w entries larger, so it grows; a new key the shadow \
        remembers would have hit in a main queue w entries larger, so it shrinks; within 0–30 % of the limits (it \
        always may hold one entry). Explicit removals and expiry enter neither FIFO. At most 16 entries per call \
        move from the small to the main queue beyond what an eviction needs, so a drop in the share is spread \
        over calls.

        Why marginal hits: the hit-density climber of the first version (every min(4 × capacity, 100,000) \
        requests, move toward the queue with more hits per entry) measured where hits land, not what one more \
        entry would add. On recency-driven traces (sprite) most hits land in the main queue, so it kept the small \
        queue at 1 % although a larger one lets a new key stay until its second read (sprite @ 1000: 88.3, 2.3 \
        under LRU). Ghost hits are the hits a larger queue would have had, as ARC uses them; counting only those \
        within the window w keeps a loop longer than the cache, whose keys come back from deep in the ghost, \
        from growing the small queue (every ghost hit counted: a mean gap of −0.90 in simulation, below).

        With a cost limit the small queue's budget is the same share of `costLimit` in cost units (and of \
        `countLimit` in entries; over either is over budget), and capacity for the ghost, the shadow and the step \
        is the most entries the cache has held. "Eviction order": trims and lowered limits take, one at a time, the \
        entry the next eviction would take (second chances included); snapshots, `keys` and the cost-first \
        trim's tie-break list the small queue oldest first, then the main queue oldest first.


        """
        let misses = checks.filter { !$0.passed && !$0.target.contains("stretch") }
        if misses.isEmpty {
            out += "Every required target passes in this run, so `MemoryCache` uses `.s3FIFO` by default; `.lru`, `.fifo` and `.lfu` stay selectable.\n\n"
        } else {
            out += "Required targets missed in this run: " + misses.map { "\($0.target) (\($0.value), limit \($0.limit))" }.joined(separator: "; ") + ".\n\n"
        }
        out += """
        Stretch misses: no cell within 0.5 of the best known value on multi1 @ 1000, cs @ 500, ps @ 1000, \
        multi3 @ 2000, cpp @ 200 and sprite @ 1000 (see the table). The largest, multi1 @ 1000, is a loop slightly \
        longer than the cache (cs's loop over about 1.4 × capacity beside cpp), where LIRS keeps a fixed part of the \
        loop resident and S3-FIFO's ghost cannot.

        Measured in a simulator of the policy over the same 25 cells (mean gap to best known; worst cell under LRU). \
        The simulator's count-only queues come out a little better than `MemoryCache` on the mean (this rule: \
        −0.34; −0.69; the first version: −0.53; −2.37), so compare its rows with each other. Not adopted: the \
        small queue starting at 1 % (−0.39; −0.63); every ghost hit counted, no window, as in ARC (−0.90; −0.67); a \
        window of 0.05 or 0.2 × capacity (−0.35; −0.84 and −0.37; −0.73) or steps of 0.5 or 2 entries (−0.36; −0.88 \
        and −0.35; −0.73): a plateau, not a tuned point; the hit-density climber kept beside the rule (−0.36; \
        −0.89); the ghost's age counted in insertions rather than evictions (−0.38; −1.14); an admission gate on \
        ghost hits by hash, adapted on admissions evicted unread (−0.34; −0.69: no change on multi1); the \
        ghost's reach adapted on shadow hits (−0.34; −0.69: no change). The ghost's size stays the issue's \
        0.9 × capacity: the loop cells flip around it (0.7: −0.22, 0.8: −0.36, 1.0: −1.20, multi1 and gli \
        moving by points), so it is not tuned to these traces.


        """
        if let s3 = footprint.first(where: { $0.kind == .stash(.s3fifo) }),
           let lru = footprint.first(where: { $0.kind == .stash(.lru) }) {
            out += "Memory per entry beyond key and value, measured full after churning through as many keys again "
            out += "(ghost and shadow included): \(fixed(s3.medianBytesPerEntryBeyondPayload, 1)) B for \(name), "
            out += "\(fixed(lru.medianBytesPerEntryBeyondPayload, 1)) B for LRU (\(s3.entries.formatted()) entries).\n\n"
        }
        let speed = [("get-hit", "reads that hit"), ("set", "sets"), ("zipf 80/20", "the Zipf mix"), ("2 threads", "two threads contending")]
            .compactMap { phaseName, label -> String? in
                guard let phase = memory.first(where: { $0.phase == phaseName }),
                      let ratio = phase.timeRatio(.stash(.s3fifo), .stash(.lru)) else { return nil }
                return "\(label) \(fixed(ratio, 2))×"
            }
        if !speed.isEmpty {
            out += "Time per operation of \(name) over LRU's, medians of this run: " + speed.joined(separator: ", ") + ".\n\n"
        }
        return out
    }
}
