/// The directives of a `Cache-Control` field (RFC 9111 §5.2), parsed once.
///
/// Parsing never fails: a malformed directive is kept under its literal name
/// (so it matches nothing known) and unknown directives are ignored by the
/// policy. When a directive appears more than once, the first occurrence wins
/// (RFC 9111 §4.2.1 allows the first or "stale"). Names compare
/// case-insensitively; a quoted value is unquoted.
struct CacheControl: Sendable, Equatable {
    /// The largest delta-seconds a cache must represent (RFC 9111 §1.2.2): larger values are clamped to it.
    static let maximumDeltaSeconds: Int64 = 2_147_483_648

    /// Lower-cased directive names and their unquoted values (`nil` when the directive has none).
    private(set) var directives: [String: String?] = [:]

    /// Parses every line of a `Cache-Control` (or `Pragma`) field.
    ///
    /// - Complexity: O(n) in the total length of the lines.
    init(lines: [String]) {
        for line in lines { parse(Array(line.utf8)) }
    }

    /// Whether `name` (lower case) is present, with or without a value.
    func contains(_ name: String) -> Bool { directives[name] != nil }

    /// The value of `name`, or `nil` if it is absent or has no value.
    func value(_ name: String) -> String? { directives[name] ?? nil }

    /// The delta-seconds of `name`: `nil` when absent, 0 when its value is
    /// missing or not a number (an invalid freshness value makes a response
    /// stale), the leading digits otherwise (`3600.5` and `3600a` are 3600),
    /// clamped to ``maximumDeltaSeconds``.
    func seconds(_ name: String) -> Int64? {
        guard let entry = directives[name] else { return nil }
        guard let text = entry else { return 0 }
        return Self.leadingDeltaSeconds(text) ?? 0
    }

    /// The leading decimal digits of `text` as seconds, clamped; `nil` when it does not start with a digit.
    static func leadingDeltaSeconds(_ text: some StringProtocol) -> Int64? {
        var value: Int64 = 0
        var sawDigit = false
        for byte in text.utf8 {
            guard byte >= 0x30, byte <= 0x39 else { break }
            sawDigit = true
            if value < maximumDeltaSeconds { value = value * 10 + Int64(byte - 0x30) }
        }
        return sawDigit ? min(value, maximumDeltaSeconds) : nil
    }

    private mutating func parse(_ bytes: [UInt8]) {
        var index = 0
        let count = bytes.count
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
        while index < count {
            while index < count, isSpace(bytes[index]) || bytes[index] == UInt8(ascii: ",") { index += 1 }
            guard index < count else { return }
            let nameStart = index
            while index < count, bytes[index] != UInt8(ascii: "="), bytes[index] != UInt8(ascii: ",") { index += 1 }
            var nameEnd = index
            let hasValue = index < count && bytes[index] == UInt8(ascii: "=")
            if !hasValue {
                while nameEnd > nameStart, isSpace(bytes[nameEnd - 1]) { nameEnd -= 1 }
            }
            let name = String(decoding: bytes[nameStart..<nameEnd].map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
            var value: String?
            if hasValue {
                index += 1
                if index < count, bytes[index] == UInt8(ascii: "\"") {
                    index += 1
                    var unquoted: [UInt8] = []
                    while index < count, bytes[index] != UInt8(ascii: "\"") {
                        if bytes[index] == UInt8(ascii: "\\"), index + 1 < count { index += 1 }
                        unquoted.append(bytes[index])
                        index += 1
                    }
                    index += 1
                    value = String(decoding: unquoted, as: UTF8.self)
                    while index < count, bytes[index] != UInt8(ascii: ",") { index += 1 }
                } else {
                    let valueStart = index
                    while index < count, bytes[index] != UInt8(ascii: ",") { index += 1 }
                    var valueEnd = index
                    while valueEnd > valueStart, isSpace(bytes[valueEnd - 1]) { valueEnd -= 1 }
                    value = String(decoding: bytes[valueStart..<valueEnd], as: UTF8.self)
                }
            }
            if !name.isEmpty, directives[name] == nil { directives[name] = .some(value) }
        }
    }

    /// Whether `lines` form a Structured Fields dictionary whose delta-seconds directives are
    /// integers (RFC 9213 §2.1): an invalid `CDN-Cache-Control` is ignored whole.
    static func isValidStructuredDictionary(_ lines: [String]) -> Bool {
        let deltaDirectives: Set<String> = ["max-age", "s-maxage", "stale-while-revalidate", "stale-if-error"]
        for line in lines {
            for member in line.split(separator: ",", omittingEmptySubsequences: false) {
                let text = member.trimmingSpaces
                let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let key = parts[0]
                guard let first = key.utf8.first, (first >= 0x61 && first <= 0x7A) || first == UInt8(ascii: "*"),
                      key.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || "_-.*".utf8.contains($0) })
                else { return false }
                guard parts.count == 2 else { continue }
                let value = parts[1]
                if deltaDirectives.contains(String(key)) {
                    guard !value.isEmpty, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return false }
                } else if value.isEmpty {
                    return false
                }
            }
        }
        return true
    }
}
