#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A one-line progress bar on a terminal, redrawn in place:
///
///     clearing [###########.........................]  31%  31,744/100,000
///
/// Drawn only when its file descriptor is a terminal (standard error by
/// default), so that pipes and log files never receive control characters.
/// Redraws at most once per percent, with the exact count at that moment.
///
/// ```swift
/// var bar = ProgressBar(label: "clearing")
/// try cache.removeAll { removed, total in bar.update(completed: removed, total: total) }
/// bar.finish()
/// ```
struct ProgressBar {
    /// The text before the bar.
    let label: String
    /// The number of cells between the brackets.
    let width: Int
    /// Where the bar is drawn.
    let descriptor: Int32
    /// Whether anything is drawn: `descriptor` is a terminal.
    let isEnabled: Bool
    /// The percentage last drawn, or nil before the first drawing.
    private var lastPercent: Int?

    /// A bar writing to `descriptor` (standard error by default), enabled when
    /// that is a terminal, unless `isEnabled` says otherwise.
    init(label: String, width: Int = 36, descriptor: Int32 = STDERR_FILENO, isEnabled: Bool? = nil) {
        self.label = label
        self.width = max(width, 1)
        self.descriptor = descriptor
        self.isEnabled = isEnabled ?? (isatty(descriptor) != 0)
    }

    /// Shows `completed` of `total`.
    mutating func update(completed: Int, total: Int) {
        guard isEnabled else { return }
        let percent = Self.percent(completed: completed, total: total)
        guard percent != lastPercent else { return }
        lastPercent = percent
        let line = Self.render(label: label, completed: completed, total: total, width: width)
        // Carriage return, the line, then erase whatever a longer line left behind.
        draw("\r" + line + "\u{1B}[K")
    }

    /// Ends the bar's line, so that later output starts on a fresh one.
    mutating func finish() {
        guard isEnabled, lastPercent != nil else { return }
        draw("\n")
        lastPercent = nil
    }

    /// The bar's text, without control characters: the label, the bar, the
    /// percentage, and the counts.
    static func render(label: String, completed: Int, total: Int, width: Int) -> String {
        let total = max(total, 0)
        let completed = min(max(completed, 0), total)
        // An empty job is complete.
        let fraction = total == 0 ? 1.0 : Double(completed) / Double(total)
        let filled = min(Int(fraction * Double(width)), width)
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let percent = String(Self.percent(completed: completed, total: total))
        let percentText = String(repeating: " ", count: max(3 - percent.count, 0)) + percent + "%"
        return "\(label) [\(bar)] \(percentText)  \(grouped(completed))/\(grouped(total))"
    }

    /// The whole percentage done, 0 to 100; 100 for an empty job.
    static func percent(completed: Int, total: Int) -> Int {
        guard total > 0 else { return 100 }
        return Int(Double(min(max(completed, 0), total)) / Double(total) * 100)
    }

    /// `100000` as `100,000`.
    static func grouped(_ value: Int) -> String {
        let digits = Array(String(value.magnitude))
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { result += "," }
            result.append(digit)
        }
        return value < 0 ? "-" + result : result
    }

    private func draw(_ text: String) {
        try? StandardStreams.write(Data(text.utf8), to: descriptor)
    }
}
