import Foundation

/// A trace: the keys requested, in order.
public struct Trace: Sendable {
    public var name: String
    public var keys: [Int]

    public init(name: String, keys: [Int]) {
        self.name = name
        self.keys = keys
    }

    public var uniqueKeyCount: Int { Set(keys).count }

    /// Reads a trace file: one decimal integer key per line. Blank lines and
    /// surrounding spaces or carriage returns are ignored; anything else fails.
    public static func load(path: String, name: String) throws -> Trace {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw BenchError("cannot read trace file \(path)")
        }
        var keys: [Int] = []
        keys.reserveCapacity(data.count / 4)
        var value = 0
        var digits = 0
        var line = 1
        var negative = false
        func finish() throws {
            if digits > 0 {
                keys.append(negative ? -value : value)
            } else if negative {
                throw BenchError("\(path):\(line): a '-' without digits")
            }
            value = 0; digits = 0; negative = false
        }
        for byte in data {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                let (product, overflow1) = value.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = product.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
                if overflow1 || overflow2 { throw BenchError("\(path):\(line): key does not fit in Int") }
                value = sum
                digits += 1
            case UInt8(ascii: "-") where digits == 0 && !negative:
                negative = true
            case UInt8(ascii: "\n"):
                try finish()
                line += 1
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
                continue
            default:
                throw BenchError("\(path):\(line): unexpected byte \(byte) in a trace of decimal keys")
            }
        }
        try finish()
        return Trace(name: name, keys: keys)
    }
}

/// One row of the traces README's reference table.
public struct TraceReference: Sendable, Codable, Hashable {
    public var trace: String
    public var capacity: Int
    public var lru: Double
    public var fifo: Double
    public var bestKnown: Double
    public var bestKnownPolicy: String
    public var opt: Double

    /// Parses every row of the form `| gli @ 500 | 0.95 | 0.95 | 33.22 (LIRS) | 34.33 |`
    /// from the README in the traces folder: capacities and reference values both come
    /// from there, so the benchmark follows the README if it changes.
    public static func parse(readme: String) throws -> [TraceReference] {
        var rows: [TraceReference] = []
        for rawLine in readme.split(separator: "\n", omittingEmptySubsequences: true) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            guard line.hasPrefix("|") else { continue }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
                .dropFirst().dropLast()
            let columns = Array(cells)
            guard columns.count == 5 else { continue }
            let head = columns[0].split(separator: "@").map { $0.trimmingCharacters(in: .whitespaces) }
            guard head.count == 2, let capacity = Int(head[1]) else { continue }
            func percent(_ text: String) throws -> Double {
                let number = text.split(separator: " ").first.map(String.init) ?? ""
                guard let value = Double(number) else {
                    throw BenchError("README row '\(line)': '\(text)' is not a percentage")
                }
                return value
            }
            let best = columns[3]
            var policy = ""
            if let open = best.firstIndex(of: "("), let close = best.lastIndex(of: ")"), open < close {
                policy = String(best[best.index(after: open)..<close])
            }
            rows.append(TraceReference(
                trace: head[0], capacity: capacity,
                lru: try percent(columns[1]), fifo: try percent(columns[2]),
                bestKnown: try percent(best), bestKnownPolicy: policy,
                opt: try percent(columns[4])))
        }
        if rows.isEmpty { throw BenchError("no 'trace @ capacity' rows found in the traces README") }
        return rows
    }
}

/// A failure the runner reports and exits on.
public struct BenchError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Hit ratio in percent (unrounded).
public func hitPercent(hits: Int, requests: Int) -> Double {
    guard requests > 0 else { return 0 }
    return Double(hits) * 100 / Double(requests)
}

/// A percentage with two decimals, as the README prints them: the form in which
/// reference values are compared.
public func twoDecimals(_ value: Double) -> String {
    String(format: "%.2f", value)
}
