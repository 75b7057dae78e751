import Testing
@testable import StashHTTP

@Suite(.timeLimit(.minutes(5))) struct CacheControlTests {
    @Test func parsesDirectivesAcrossLines() {
        let cc = CacheControl(lines: ["public, max-age=60", "No-Cache, s-maxage=\"30\""])
        #expect(cc.contains("public"))
        #expect(cc.contains("no-cache"))
        #expect(cc.seconds("max-age") == 60)
        #expect(cc.seconds("s-maxage") == 30)
        #expect(cc.seconds("min-fresh") == nil)
    }

    @Test func firstOccurrenceWins() {
        #expect(CacheControl(lines: ["max-age=1800, max-age=1"]).seconds("max-age") == 1800)
        #expect(CacheControl(lines: ["max-age=1", "max-age=1800"]).seconds("max-age") == 1)
    }

    @Test func quotedStringsHideTheirContent() {
        let cc = CacheControl(lines: ["extension=\"max-age=3600, no-store\", max-age=1"])
        #expect(cc.seconds("max-age") == 1)
        #expect(!cc.contains("no-store"))
        #expect(cc.value("extension") == "max-age=3600, no-store")
        let escaped = CacheControl(lines: ["private=\"a\\\"b\", max-age=5"])
        #expect(escaped.value("private") == "a\"b")
        #expect(escaped.seconds("max-age") == 5)
    }

    @Test func malformedValuesMakeStaleOrAreIgnored() {
        #expect(CacheControl(lines: ["max-age=003600"]).seconds("max-age") == 3600)
        #expect(CacheControl(lines: ["max-age=3600.5"]).seconds("max-age") == 3600)
        #expect(CacheControl(lines: ["max-age=3600a"]).seconds("max-age") == 3600)
        // Invalid delta-seconds: the response is stale.
        #expect(CacheControl(lines: ["max-age=a3600"]).seconds("max-age") == 0)
        #expect(CacheControl(lines: ["max-age='3600'"]).seconds("max-age") == 0)
        #expect(CacheControl(lines: ["max-age= 3600"]).seconds("max-age") == 0)
        #expect(CacheControl(lines: ["max-age=-5"]).seconds("max-age") == 0)
        #expect(CacheControl(lines: ["max-age"]).seconds("max-age") == 0)
        // A space before '=' makes another directive name: ignored.
        #expect(CacheControl(lines: ["max-age =3600"]).seconds("max-age") == nil)
        // Overflow is clamped to 2^31.
        #expect(CacheControl(lines: ["max-age=99999999999999999999999"]).seconds("max-age") == 2_147_483_648)
    }

    @Test(arguments: ["", ",,,", "=", "=5", "\"", "max-age=\"", "a=\"unterminated, b", ", ,max-age=5,", "\u{0}\u{ff}"])
    func garbageNeverCrashes(_ line: String) {
        let cc = CacheControl(lines: [line])
        _ = cc.seconds("max-age")
        _ = cc.contains("no-store")
    }
}
