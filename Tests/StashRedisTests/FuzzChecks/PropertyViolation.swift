#if Redis
/// A fuzzed property that does not hold: the fuzz targets stop on it (so libFuzzer keeps the
/// input), and the corpus replay in `swift test` records it as an issue.
package struct PropertyViolation: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
#endif  // Redis
