import Testing
@testable import StashHTTP

@Suite struct HTTPDateTests {
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
}
