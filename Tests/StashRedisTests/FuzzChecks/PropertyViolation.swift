/// A fuzzed property that does not hold: the fuzz targets stop on it (so libFuzzer keeps the
/// input), and the corpus replay in `swift test` records it as an issue.
///
/// A violation marked `knownDefect` stands for a reported defect outside the code this fuzzing
/// may fix: the check detects the input before it reaches the trapping code, the fuzz target
/// carries on past it, and the replay records it as a known issue until it is fixed.
package struct PropertyViolation: Error, CustomStringConvertible {
    package let description: String
    package let knownDefect: Bool
    package init(_ description: String, knownDefect: Bool = false) {
        self.description = description
        self.knownDefect = knownDefect
    }
}
