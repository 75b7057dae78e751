/// Parsing and formatting of HTTP dates (RFC 9110 §5.6.7), without Foundation.
///
/// A date is a count of whole seconds since 1970-01-01 00:00:00 UTC. The
/// parser accepts the three forms a recipient must: IMF-fixdate
/// (`Sun, 06 Nov 1994 08:49:37 GMT`), the obsolete RFC 850 form
/// (`Sunday, 06-Nov-94 08:49:37 GMT`) and ANSI C's asctime
/// (`Sun Nov  6 08:49:37 1994`). Names compare case-insensitively, every other
/// deviation (other time zones, missing comma, doubled spaces, one-digit hours,
/// a two-digit year in the IMF form) makes the value invalid, which callers
/// treat as the RFC says for each field (an invalid `Expires` is in the past).
///
/// Two edges of the grammar have a fixed meaning here, so that every value `parse` returns
/// survives `format` and `parse` again (`parse(format(parse(x))) == parse(x)` for every `x`):
/// - **The leap second** `23:59:60`, which the grammar allows (RFC 9110 §5.6.7), is read as
///   `23:59:59`. Seconds since the epoch, like POSIX time, have no leap seconds, so the second
///   before is the closest time they can name; rolling over to the next day would turn
///   `31 Dec 9999 23:59:60` into a year the four-digit grammar cannot write.
/// - **The range** is what four-digit years name: from `01 Jan 0000 00:00:00` to
///   `31 Dec 9999 23:59:59` (proleptic Gregorian, as RFC 9110 uses). `parse` never returns a
///   value outside it, and `format` clamps to it.
///
/// The one HTTP date in Stash: `stash-proxy` writes the `Date` of its own responses with it.
package enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let shortDays = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    private static let longDays = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
    private static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let dayNames = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]

    /// The seconds since the epoch that `text` names, or `nil` if it is not a valid HTTP date.
    ///
    /// - Complexity: O(n) in the length of `text`.
    static func parse(_ text: some StringProtocol) -> Int64? {
        let bytes = Array(text.utf8)
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        let trimmed = bytes[start..<end]
        let parts = trimmed.split(separator: 0x20, omittingEmptySubsequences: false).map { Array($0) }
        guard let first = parts.first, first.last == UInt8(ascii: ",") else { return parseAsctime(Array(trimmed)) }
        if parts.count == 6 { return parseIMF(parts) }
        if parts.count == 4 { return parseRFC850(parts) }
        return nil
    }

    /// The earliest date `parse` returns and `format` writes: `Sat, 01 Jan 0000 00:00:00 GMT`.
    static let earliest: Int64 = days(year: 0, month: 1, day: 1) * 86_400
    /// The latest date `parse` returns and `format` writes: `Fri, 31 Dec 9999 23:59:59 GMT`.
    static let latest: Int64 = days(year: 9999, month: 12, day: 31) * 86_400 + 86_399

    /// `seconds` as an IMF-fixdate, the form HTTP senders must use; clamped to
    /// ``earliest``...``latest``, the dates a four-digit year can name.
    ///
    /// - Complexity: O(1).
    package static func format(_ seconds: Int64) -> String {
        let seconds = min(max(seconds, earliest), latest)
        let days = floorDivide(seconds, 86_400)
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        let weekday = dayNames[Int(((days % 7) + 7) % 7)]
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        var yearText = "\(year)"
        while yearText.count < 4 { yearText = "0" + yearText }
        return "\(weekday), \(two(day)) \(monthNames[Int(month) - 1]) \(yearText) "
            + "\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) GMT"
    }

    // MARK: - The three forms

    /// `Sun, 06 Nov 1994 08:49:37 GMT`
    private static func parseIMF(_ parts: [[UInt8]]) -> Int64? {
        guard parts[0].count == 4, parts[0].last == UInt8(ascii: ","),
              shortDays.contains(lowercased(parts[0].dropLast())),
              parts[1].count == 2, let day = digits(parts[1]),
              let month = month(parts[2]),
              parts[3].count == 4, let year = digits(parts[3]),
              let time = time(parts[4]),
              lowercased(parts[5]) == "gmt"
        else { return nil }
        return seconds(year: year, month: month, day: day, time: time)
    }

    /// `Sunday, 06-Nov-94 08:49:37 GMT`
    private static func parseRFC850(_ parts: [[UInt8]]) -> Int64? {
        guard parts[0].count > 1, parts[0].last == UInt8(ascii: ","),
              longDays.contains(lowercased(parts[0].dropLast())),
              lowercased(parts[3]) == "gmt",
              let time = time(parts[2])
        else { return nil }
        let date = parts[1].split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
        guard date.count == 3, date[0].count == 2, let day = digits(date[0]),
              let month = month(Array(date[1])),
              date[2].count == 2, let shortYear = digits(date[2])
        else { return nil }
        // RFC 9110 §5.6.7: a two-digit year more than 50 years in the future is in the past century.
        let year = shortYear < 70 ? 2000 + shortYear : 1900 + shortYear
        return seconds(year: year, month: month, day: day, time: time)
    }

    /// `Sun Nov  6 08:49:37 1994`: the day is two characters, space-padded.
    private static func parseAsctime(_ bytes: [UInt8]) -> Int64? {
        guard bytes.count == 24, bytes[3] == 0x20, bytes[7] == 0x20, bytes[10] == 0x20, bytes[19] == 0x20,
              shortDays.contains(lowercased(bytes[0..<3])),
              let month = month(Array(bytes[4..<7])),
              let time = time(Array(bytes[11..<19])),
              let year = digits(bytes[20..<24])
        else { return nil }
        let dayBytes = bytes[8] == 0x20 ? bytes[9..<10] : bytes[8..<10]
        guard let day = digits(dayBytes) else { return nil }
        return seconds(year: year, month: month, day: day, time: time)
    }

    // MARK: - Pieces

    private static func lowercased(_ bytes: some Collection<UInt8>) -> String {
        String(decoding: bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
    }

    private static func month(_ bytes: [UInt8]) -> Int64? {
        guard bytes.count == 3, let index = months.firstIndex(of: lowercased(bytes)) else { return nil }
        return Int64(index + 1)
    }

    private static func digits(_ bytes: some Collection<UInt8>) -> Int64? {
        guard !bytes.isEmpty, bytes.count <= 9 else { return nil }
        var value: Int64 = 0
        for byte in bytes {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            value = value * 10 + Int64(byte - 0x30)
        }
        return value
    }

    /// `HH:MM:SS`, two digits each, as seconds into the day. The second may be 60, a leap
    /// second, which is read as 59 (see the type's discussion).
    private static func time(_ bytes: [UInt8]) -> Int64? {
        guard bytes.count == 8, bytes[2] == UInt8(ascii: ":"), bytes[5] == UInt8(ascii: ":"),
              let hour = digits(bytes[0..<2]), let minute = digits(bytes[3..<5]), let second = digits(bytes[6..<8]),
              hour < 24, minute < 60, second <= 60
        else { return nil }
        return hour * 3600 + minute * 60 + min(second, 59)
    }

    private static func seconds(year: Int64, month: Int64, day: Int64, time: Int64) -> Int64? {
        guard year >= 0, year <= 9999, day >= 1, day <= daysIn(month: month, year: year) else { return nil }
        return days(year: year, month: month, day: day) * 86_400 + time
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = floorDivide(y, 400)
        let yearOfEra = y - era * 400
        let monthIndex = (month + 9) % 12
        let dayOfYear = (153 * monthIndex + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of a day count since 1970-01-01: the inverse of `days(year:month:day:)`.
    private static func civil(fromDays count: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = count + 719_468
        let era = floorDivide(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : -((-a + b - 1) / b)
    }
}
