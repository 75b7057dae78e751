import Testing
@testable import StashHTTP
import StashTestSupport

@Suite(.timeLimit(.minutes(5))) struct HTTPDateTests {
    // 1994-11-06 08:49:37 UTC, RFC 9110's example.
    let example: Int64 = 784_111_777

    @Test func parsesTheThreeForms() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == example)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == example)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == example)
    }

    @Test func namesAreCaseInsensitive() {
        #expect(HTTPDate.parse("SUN, 06 NOV 1994 08:49:37 gmt") == example)
    }

    @Test func formatsIMFFixdateAndRoundTrips() {
        #expect(HTTPDate.format(example) == "Sun, 06 Nov 1994 08:49:37 GMT")
        for seconds: Int64 in [0, 951_782_400, 2_147_483_648, 10_000_000_000, -86_400] {
            #expect(HTTPDate.parse(HTTPDate.format(seconds)) == seconds)
        }
    }

    @Test func farFutureAndTwoDigitYears() {
        #expect(HTTPDate.parse("Tue, 19 Jan 2038 03:14:08 GMT") == 2_147_483_648)
        #expect(HTTPDate.parse("Sat, 20 Nov 2286 17:46:39 GMT") == 9_999_999_999)
        // RFC 850 years below 70 are in this century.
        #expect(HTTPDate.parse("Thursday, 18-Aug-50 02:01:18 GMT") == HTTPDate.parse("Thu, 18 Aug 2050 02:01:18 GMT"))
        #expect(HTTPDate.parse("Thursday, 18-Aug-94 02:01:18 GMT") == HTTPDate.parse("Thu, 18 Aug 1994 02:01:18 GMT"))
    }

    @Test(arguments: [
        "", "0", "-1", "garbage", "Thu, 18 Aug 2050 02:01:18 UTC", "Thu, 18 Aug 2050 02:01:18 AEST",
        "Thu, 18 Aug 50 02:01:18 GMT", "Thu 18 Aug 2050 02:01:18 GMT", "Thu, 18  Aug  2050 02:01:18 GMT",
        "Thu, 18-Aug-2050 02:01:18 GMT", "Thu, 18 Aug 2050 02.01.18 GMT", "Thu, 18 Aug 2050 2:01:18 GMT",
        "Thu, 31 Feb 2050 02:01:18 GMT", "Thu, 18 Aug 2050 25:01:18 GMT", "Xyz, 18 Aug 2050 02:01:18 GMT",
        "Thu, 18 Foo 2050 02:01:18 GMT", "Thu Aug  8 02:01:18 20500", "Sun Nov 6 08:49:37 1994",
        "Thu, 18 Aug 999999999999 02:01:18 GMT", "Thu, 1\u{e9} Aug 2050 02:01:18 GMT",
    ])
    func rejectsInvalidDates(_ text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }

    // MARK: - The leap second and the year 9999 (issue #25)

    /// The leap second is read as the second before it, so the last second of the year 9999 stays
    /// in the year 9999 and survives `format` and `parse` again.
    @Test func theLeapSecondIsReadAsTheSecondBeforeIt() {
        #expect(HTTPDate.parse("Fri, 31 Dec 9999 23:59:60 GMT") == HTTPDate.parse("Fri, 31 Dec 9999 23:59:59 GMT"))
        #expect(HTTPDate.parse("Fri, 31 Dec 9999 23:59:60 GMT") == HTTPDate.latest)
        #expect(HTTPDate.parse("Sat, 31 Dec 2016 23:59:60 GMT") == HTTPDate.parse("Sat, 31 Dec 2016 23:59:59 GMT"))
        #expect(HTTPDate.format(HTTPDate.parse("Fri, 31 Dec 9999 23:59:60 GMT")!) == "Fri, 31 Dec 9999 23:59:59 GMT")
        #expect(HTTPDate.parse("Sat, 31 Dec 2016 23:59:61 GMT") == nil)
    }

    @Test func formatClampsToTheFourDigitYears() {
        #expect(HTTPDate.format(.max) == "Fri, 31 Dec 9999 23:59:59 GMT")
        #expect(HTTPDate.format(HTTPDate.latest + 1) == "Fri, 31 Dec 9999 23:59:59 GMT")
        #expect(HTTPDate.format(.min) == "Sat, 01 Jan 0000 00:00:00 GMT")
        #expect(HTTPDate.parse("Sat, 01 Jan 0000 00:00:00 GMT") == HTTPDate.earliest)
    }

    /// `parse(format(parse(x))) == parse(x)` for every `x`: seeded random dates in all three forms,
    /// every edge of the range, and mutations of them.
    @Test func everyParsedDateSurvivesFormatAndParse() {
        var random = SeededGenerator(seed: 0x25_0002)
        func pick<T>(_ values: [T]) -> T { values[Int(random.next() % UInt64(values.count))] }
        func number(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(random.next() % UInt64(range.count)) }
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        var inputs = ["Sat, 01 Jan 0000 00:00:00 GMT", "Fri, 31 Dec 9999 23:59:60 GMT", "Fri, 31 Dec 9999 23:59:59 GMT",
                      "Thu, 29 Feb 2000 12:00:60 GMT", "Sun Dec 31 23:59:60 9999", "Friday, 31-Dec-69 23:59:60 GMT"]
        for _ in 0..<20_000 {
            let year = pick([number(0...9999), number(1600...2400), pick([0, 1, 1677, 1678, 2261, 2262, 9998, 9999])])
            let time = "\(two(number(0...23))):\(two(number(0...59))):\(two(pick([number(0...59), 59, 60])))"
            let month = pick(months), day = number(1...31)
            var text = switch number(0...2) {
            case 0: "Mon, \(two(day)) \(month) \(String(repeating: "0", count: 4 - "\(year)".count))\(year) \(time) GMT"
            case 1: "Monday, \(two(day))-\(month)-\(two(year % 100)) \(time) GMT"
            default: "Mon \(month) \(day < 10 ? " \(day)" : "\(day)") \(time) \(String(repeating: "0", count: 4 - "\(year)".count))\(year)"
            }
            if number(0...9) == 0 {
                var bytes = Array(text.utf8)
                bytes[number(0...(bytes.count - 1))] = UInt8(truncatingIfNeeded: random.next())
                text = String(decoding: bytes, as: UTF8.self)
            }
            inputs.append(text)
        }
        var parsed = 0
        for input in inputs {
            guard let seconds = HTTPDate.parse(input) else { continue }
            parsed += 1
            #expect(seconds >= HTTPDate.earliest && seconds <= HTTPDate.latest, "\(input)")
            #expect(HTTPDate.parse(HTTPDate.format(seconds)) == seconds, "\(input)")
        }
        #expect(parsed > 10_000)
    }
}
