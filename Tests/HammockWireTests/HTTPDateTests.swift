import Foundation
import HammockTestSupport
import HammockWire
import Testing

@Suite("HTTP dates")
struct HTTPDateTests {
    let now = Date(timeIntervalSince1970: 1_700_000_000)  // 2023-11-14
    let expected = Date(timeIntervalSince1970: 784_111_777)  // 1994-11-06T08:49:37Z

    @Test("The three forms RFC 9110 requires parse to the same instant")
    func threeForms() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT", now: now) == expected)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT", now: now) == expected)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994", now: now) == expected)
        #expect(HTTPDate.parse("Sun Nov 16 08:49:37 1994", now: now) == expected.addingTimeInterval(10 * 86_400))
    }

    @Test(
        "Formatting writes IMF-fixdate, and what it writes parses back",
        arguments: [
            0, 784_111_777, 951_782_400, 1_700_000_000, -1, -62_135_596_800, 253_402_300_799,
        ])
    func roundTrip(seconds: Int) {
        let date = Date(timeIntervalSince1970: Double(seconds))
        let text = HTTPDate.format(date)
        #expect(text.utf8.count == 29, "\(text)")
        #expect(HTTPDate.parse(text, now: now) == date, "\(text)")
    }

    @Test("Known instants format as other implementations write them")
    func knownFormats() {
        #expect(HTTPDate.format(expected) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 951_782_400)) == "Tue, 29 Feb 2000 00:00:00 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        // Out of HTTP's range: clamped, never a crash.
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 1e300)) == "Fri, 31 Dec 9999 23:59:59 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: -1e300)) == "Mon, 01 Jan 0001 00:00:00 GMT")
    }

    @Test(
        "Dates that do not exist and numbers out of bounds are not dates",
        arguments: [
            "Thu, 01 Jan 999999999999 00:00:00 GMT",  // the year that overflowed the day arithmetic
            "Thu, 01 Jan -99999999999999999999 00:00:00 GMT",
            "Sat, 31 Feb 2099 00:00:00 GMT",
            "Wed, 29 Feb 2023 00:00:00 GMT",
            "Mon, 31 Apr 2023 00:00:00 GMT",
            "Mon, 00 Jan 2023 00:00:00 GMT",
            "Mon, 01 Jan 2023 24:00:00 GMT",
            "Mon, 01 Jan 2023 00:60:00 GMT",
            "Mon, 01 Jan 2023 00:00:61 GMT",
            "Thu, 29 Feb 0000 23:54:60 GMT",  // year 0000 (found by the fuzzer): it formats as 0001
            "Fri, 31 Dec 9999 23:59:60 GMT",  // a leap second past the last date that formats
            "Mon, 1 Jan 2023 00:00:00 GMT",
            "mon, 01 jan 2023 00:00:00 gmt",
            "Mon, 01 Jan 2023 00:00:00 UTC",
            "Mon, 01 Jan 2023 00:00:00 GMT ",
            "Mon, 01 Jan 2023 00:00:00 GMTX",
            "Mon,  01 Jan 2023 00:00:00 GMT",
            "Monday, 31-Feb-23 00:00:00 GMT",
            "Sun Nov  6 08:49:37 19944",
            "Sun Nov 6 08:49:37 1994",
            "Sun Nov   6 08:49:37 1994",
            "Sun Feb 30 08:49:37 1994",
            "",
            "Sun, ",
            "not a date",
        ])
    func invalid(text: String) {
        #expect(HTTPDate.parse(text, now: now) == nil)
    }

    @Test("A leap year's 29 February and a leap second are dates")
    func leapDays() {
        #expect(HTTPDate.parse("Thu, 29 Feb 2024 12:00:00 GMT", now: now) != nil)
        #expect(HTTPDate.parse("Tue, 29 Feb 2000 12:00:00 GMT", now: now) != nil)
        #expect(HTTPDate.parse("Sat, 31 Dec 2016 23:59:60 GMT", now: now) != nil)
    }

    @Test("An RFC 850 two-digit year more than 50 years ahead is in the past century")
    func rfc850Century() throws {
        let past = try #require(HTTPDate.parse("Tuesday, 01-Jan-74 00:00:00 GMT", now: now))
        #expect(HTTPDate.format(past).hasSuffix("1974 00:00:00 GMT"))
        let fiftyAhead = try #require(HTTPDate.parse("Sunday, 01-Jan-73 00:00:00 GMT", now: now))
        #expect(HTTPDate.format(fiftyAhead).hasSuffix("2073 00:00:00 GMT"))
        let in2050 = try #require(HTTPDate.parse("Saturday, 01-Jan-50 00:00:00 GMT", now: now))
        #expect(HTTPDate.format(in2050).hasSuffix("2050 00:00:00 GMT"))
    }

    @Test("Random bytes and mutated dates never crash the parser")
    func randomInput() {
        var generator = SplitMix64(seed: 9)
        let valid = Array("Sun, 06 Nov 1994 08:49:37 GMT".utf8)
        for _ in 0..<5_000 {
            var bytes = valid
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                bytes[index] = UInt8.random(in: 0...255, using: &generator)
            }
            if let date = HTTPDate.parse(String(decoding: bytes, as: UTF8.self), now: now) {
                #expect(HTTPDate.parse(HTTPDate.format(date), now: now) == date)
            }
        }
    }
}
