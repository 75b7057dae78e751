// Timing calls of several implementations of one operation, rounds interleaved, printing medians
// beside a baseline: what the benches in Benchmarks/NIO share.
import Foundation

/// One implementation under test: its name and the operation, given the call's index, returning
/// a number that the checksum adds up (so that the work is not optimised away).
public typealias TimedCase = (name: String, call: (Int) async throws -> Int)

/// Times `operations` calls of each case per round, the cases in a rotating order over `rounds`
/// rounds, checks that every round's checksum is `operations * expectedPerCall`, and prints each
/// case's median µs per call (min … max) and its ratio to `cases[baseline]`'s median.
public func compareInterleaved(
    _ title: String, cases: [TimedCase], baseline: Int, rounds: Int, operations: Int, expectedPerCall: Int
) async throws {
    var results = Array(repeating: [Double](), count: cases.count)
    for round in 0..<rounds {
        for offset in 0..<cases.count {
            let index = (round + offset) % cases.count
            var checksum = 0
            let start = monotonicNanoseconds()
            for call in 0..<operations {
                checksum &+= try await cases[index].call(call)
            }
            let elapsed = Double(monotonicNanoseconds() - start)
            precondition(checksum == operations * expectedPerCall, "\(cases[index].name): a call gave another answer")
            results[index].append(elapsed / Double(operations))
        }
    }
    print("\(title), \(rounds) rounds interleaved; µs per call, medians (min … max)")
    let floor = median(results[baseline])
    for (index, timedCase) in cases.enumerated() {
        let values = results[index], mid = median(values)
        let range = "(\(String(format: "%.2f", values.min()! / 1000)) … \(String(format: "%.2f", values.max()! / 1000)))"
        print("\(timedCase.name.padding(toLength: 40, withPad: " ", startingAt: 0)) \(String(format: "%.2f", mid / 1000)) µs  \(range)  \(String(format: "%.2f", mid / floor))× \(cases[baseline].name)")
    }
}

/// The rounds a bench asks for with `--rounds N`; 11 by default.
public var requestedRounds: Int {
    let arguments = CommandLine.arguments
    return arguments.firstIndex(of: "--rounds").flatMap { $0 + 1 < arguments.count ? Int(arguments[$0 + 1]) : nil } ?? 11
}
