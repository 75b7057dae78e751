/// Saturating arithmetic for times and durations in nanoseconds.
///
/// Times come from clocks, from files another process or a disk fault may have damaged, and
/// from the network (HTTP dates, `Age`, `max-age`). A trapping `+`, `-` or `*` on such values
/// would stop the process; these stop at `Int64.min` or `Int64.max` instead, which every caller
/// reads as "longer ago" or "later" than anything real. `package`, so that `StashHTTP` and
/// `StashRedis` use the same three.
extension Int64 {
    /// `self + other`, saturating at `Int64.min` and `Int64.max` instead of trapping.
    ///
    /// - Complexity: O(1).
    @usableFromInline
    package func addingClamped(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        if overflow { return other > 0 ? .max : .min }
        return sum
    }

    /// `self - other`, saturating at `Int64.min` and `Int64.max` instead of trapping.
    ///
    /// - Complexity: O(1).
    @usableFromInline
    package func subtractingClamped(_ other: Int64) -> Int64 {
        let (difference, overflow) = subtractingReportingOverflow(other)
        if overflow { return other < 0 ? .max : .min }
        return difference
    }

    /// `self * other`, saturating at `Int64.min` and `Int64.max` instead of trapping.
    ///
    /// - Complexity: O(1).
    @usableFromInline
    package func multipliedClamped(by other: Int64) -> Int64 {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        if overflow { return (self < 0) != (other < 0) ? .min : .max }
        return product
    }
}
