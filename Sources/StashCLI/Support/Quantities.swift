import ArgumentParser

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Parsing and printing of byte counts, durations and times for the commands.
enum Quantities {
    /// The units `parseByteCount` accepts, lower-cased, with their sizes in bytes.
    private static let byteUnits: [String: Int] = [
        "": 1, "b": 1,
        "kb": 1_000, "mb": 1_000_000, "gb": 1_000_000_000, "tb": 1_000_000_000_000,
        "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
    ]

    /// The units `parseDuration` accepts, with their lengths in seconds.
    private static let timeUnits: [String: Int] = ["": 1, "s": 1, "m": 60, "h": 3_600, "d": 86_400]

    /// Parses a byte count: plain bytes (`1048576`), or a number with a decimal
    /// (`10MB`, `1.5GB`; `KB` = 1,000) or binary (`512KiB`, `2MiB`) unit.
    /// Units are case-insensitive.
    static func parseByteCount(_ text: String) throws -> Int {
        let (number, unit) = try split(text, what: "size")
        guard let multiplier = byteUnits[unit.lowercased()] else {
            throw ValidationError("unknown unit '\(unit)' in '\(text)': use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB")
        }
        return try scale(number, by: multiplier, original: text)
    }

    /// Parses a duration: seconds (`90`), or a number with `s`, `m`, `h` or `d`
    /// (`30s`, `15m`, `1.5h`, `7d`).
    static func parseDuration(_ text: String) throws -> Duration {
        let (number, unit) = try split(text, what: "duration")
        guard let multiplier = timeUnits[unit.lowercased()] else {
            throw ValidationError("unknown unit '\(unit)' in '\(text)': use s, m, h or d")
        }
        // In milliseconds, so that fractions such as 1.5s are exact.
        let milliseconds = try scale(number, by: multiplier * 1_000, original: text)
        return .milliseconds(milliseconds)
    }

    /// Splits `12.5MB` into `12.5` and `MB`, checking that the number is a plain
    /// non-negative decimal.
    private static func split(_ text: String, what: String) throws -> (number: Substring, unit: Substring) {
        let trimmed = text.drop { $0 == " " }
        let number = trimmed.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
        let unit = trimmed.dropFirst(number.count).drop { $0 == " " }
        guard !number.isEmpty, number.filter({ $0 == "." }).count <= 1, number.contains(where: \.isNumber) else {
            if trimmed.hasPrefix("-") {
                throw ValidationError("'\(text)' is negative: a \(what) must be zero or more")
            }
            throw ValidationError("'\(text)' is not a \(what)")
        }
        return (number, unit)
    }

    /// `number` × `multiplier`, rounded down, checking for overflow.
    private static func scale(_ number: Substring, by multiplier: Int, original: String) throws -> Int {
        let parts = number.split(separator: ".", omittingEmptySubsequences: false)
        let whole = parts[0].isEmpty ? 0 : Int(parts[0])
        let fraction = parts.count > 1 ? parts[1] : ""
        guard let whole else { throw ValidationError("'\(original)' is too large") }
        var (result, overflow) = whole.multipliedReportingOverflow(by: multiplier)
        // Add the fraction digit by digit: digit × multiplier / 10^position.
        var divisor = 1
        for digit in fraction {
            guard !overflow, divisor <= Int.max / 10 else { break }
            divisor *= 10
            let part = (digit.wholeNumberValue ?? 0) * multiplier / divisor
            (result, overflow) = result.addingReportingOverflow(part)
        }
        if overflow { throw ValidationError("'\(original)' is too large") }
        return result
    }

    /// A byte count for people: `512 bytes`, `1.2 KB`, `3.4 MB` (decimal units,
    /// as `parseByteCount` reads them).
    static func formatBytes(_ count: Int) -> String {
        if count < 1_000 { return count == 1 ? "1 byte" : "\(count) bytes" }
        var value = Double(count)
        var unit = "bytes"
        for next in ["KB", "MB", "GB", "TB", "PB", "EB"] where value >= 1_000 {
            value /= 1_000
            unit = next
        }
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(unit)"
    }

    /// A duration for people: `90s`, `1.5h`.
    static func formatDuration(_ duration: Duration) -> String {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
        for (unit, length) in [("d", 86_400.0), ("h", 3_600.0), ("m", 60.0)] where seconds >= length {
            return trimmedNumber(seconds / length) + unit
        }
        return trimmedNumber(seconds) + "s"
    }

    /// `1.5` as "1.5", `2.0` as "2", to at most three decimals.
    private static func trimmedNumber(_ value: Double) -> String {
        let thousandths = Int((value * 1_000).rounded())
        var text = "\(thousandths / 1_000)"
        var fraction = thousandths % 1_000
        if fraction != 0 {
            var digits = ""
            var scale = 100
            while fraction != 0 {
                digits += "\(fraction / scale)"
                fraction %= scale
                scale /= 10
            }
            text += "." + digits
        }
        return text
    }

    /// Nanoseconds since the Unix epoch as ISO 8601 in UTC, to the millisecond:
    /// `2025-06-01T12:34:56.789Z`.
    static func formatTimestamp(nanosecondsSince1970 nanoseconds: Int64) -> String {
        let (seconds, remainder) = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        // Round towards minus infinity for times before 1970.
        let wholeSeconds = remainder < 0 ? seconds - 1 : seconds
        let milliseconds = (remainder < 0 ? remainder + 1_000_000_000 : remainder) / 1_000_000
        var time = time_t(wholeSeconds)
        var parts = tm()
        guard gmtime_r(&time, &parts) != nil else { return "\(nanoseconds)ns" }
        func padded(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(width - digits.count, 0)) + digits
        }
        return "\(padded(parts.tm_year + 1900, 4))-\(padded(parts.tm_mon + 1, 2))-\(padded(parts.tm_mday, 2))"
            + "T\(padded(parts.tm_hour, 2)):\(padded(parts.tm_min, 2)):\(padded(parts.tm_sec, 2))"
            + ".\(padded(Int32(milliseconds), 3))Z"
    }
}
