public import Foundation
import Synchronization

/// HTTP dates (RFC 9110 §5.6.7), without shared formatters: what the server writes in `Last-Modified`
/// and reads from `If-Modified-Since`, and what the client reads from `Retry-After`.
///
/// Formats as IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`). Parses the three forms a recipient must
/// accept: IMF-fixdate, the obsolete RFC 850 form (`Sunday, 06-Nov-94 08:49:37 GMT`) and C's asctime
/// (`Sun Nov  6 08:49:37 1994`). Every number is read from a fixed number of digits, so no input can
/// overflow the arithmetic, and a date that does not exist (31 February, hour 24) is not a date.
///
/// ```swift
/// HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT", now: Date())   // 1994-11-06T08:49:37Z
/// HTTPDate.parse("Mon, 31 Feb 2025 00:00:00 GMT", now: Date())   // nil
/// ```
public enum HTTPDate {
    static let dayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    static let longDayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The IMF-fixdate of `date`, truncated to the second. Dates outside years 1 to 9999 are clamped
    /// to that range, which HTTP can express.
    public static func format(_ date: Date) -> String {
        let limit = 253_402_300_799.0  // 9999-12-31T23:59:59Z
        let lowest = -62_135_596_800.0  // 0001-01-01T00:00:00Z
        let interval = date.timeIntervalSince1970
        let seconds = Int(interval.isNaN ? 0 : min(max(interval, lowest), limit).rounded(.down))
        // A server stamps many responses with the same second: format each second once.
        if let cached = lastFormatted.withLock({ $0.seconds == seconds ? $0.text : nil }) { return cached }
        let text = format(seconds: seconds)
        lastFormatted.withLock { $0 = (seconds, text) }
        return text
    }

    /// The most recently formatted second.
    private static let lastFormatted = Mutex<(seconds: Int, text: String)>((Int.min, ""))

    static func format(seconds: Int) -> String {
        let dayNumber = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - dayNumber * 86_400
        let (year, month, day) = civil(fromDays: dayNumber)
        let weekday = dayNames[((dayNumber + 3) % 7 + 7) % 7]  // 1970-01-01 was a Thursday
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }
        func four(_ value: Int) -> String { String(repeating: "0", count: 4 - String(value).count) + String(value) }
        return "\(weekday), \(two(day)) \(monthNames[month - 1]) \(four(year)) "
            + "\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) GMT"
    }

    /// Parses any of the three HTTP date forms; `nil` for anything else, or for a date that does not exist.
    /// - Parameter now: The current time, which decides the century of an RFC 850 two-digit year (a year
    ///   more than 50 years ahead is taken to be in the past, RFC 9110 §5.6.7).
    public static func parse(_ text: String, now: Date) -> Date? {
        var scanner = Scanner(bytes: Array(text.utf8))
        if let date = scanner.imfFixdate() ?? scanner.rfc850(now: now) ?? scanner.asctime() { return date }
        return nil
    }

    /// Seconds since 1970 of a validated date and time, or `nil` if the date does not exist.
    static func timestamp(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Date? {
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day), (0...23).contains(hour),
            (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        let days = days(fromCivil: year, month, day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second
        // Only what `format` can write back: years 0001 to 9999 (year 0000, or a leap second after
        // 9999-12-31 23:59:59, would come back as another date).
        guard (-62_135_596_800...253_402_300_799).contains(seconds) else { return nil }
        return Date(timeIntervalSince1970: Double(seconds))
    }

    package static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's algorithm).
    package static func days(fromCivil year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    package static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Reads the fixed grammar of the three forms; every read is bounded by the input's length.
    struct Scanner {
        let bytes: [UInt8]
        var position = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        /// `Sun, 06 Nov 1994 08:49:37 GMT`
        mutating func imfFixdate() -> Date? {
            position = 0
            guard word(in: HTTPDate.dayNames) != nil, literal(", "), let day = digits(2), literal(" "),
                let month = word(in: HTTPDate.monthNames), literal(" "), let year = digits(4), literal(" "),
                let (hour, minute, second) = timeOfDay(), literal(" GMT"), position == bytes.count
            else { return nil }
            return HTTPDate.timestamp(year: year, month: month + 1, day: day, hour: hour, minute: minute, second: second)
        }

        /// `Sunday, 06-Nov-94 08:49:37 GMT`
        mutating func rfc850(now: Date) -> Date? {
            position = 0
            guard word(in: HTTPDate.longDayNames) != nil, literal(", "), let day = digits(2), literal("-"),
                let month = word(in: HTTPDate.monthNames), literal("-"), let shortYear = digits(2), literal(" "),
                let (hour, minute, second) = timeOfDay(), literal(" GMT"), position == bytes.count
            else { return nil }
            // The century: the one that puts the year at most 50 years after now.
            let currentYear = HTTPDate.civil(fromDays: Int((now.timeIntervalSince1970 / 86_400).rounded(.down))).year
            var year = currentYear - currentYear % 100 + shortYear
            if year > currentYear + 50 { year -= 100 }
            return HTTPDate.timestamp(year: year, month: month + 1, day: day, hour: hour, minute: minute, second: second)
        }

        /// `Sun Nov  6 08:49:37 1994`
        mutating func asctime() -> Date? {
            position = 0
            guard word(in: HTTPDate.dayNames) != nil, literal(" "), let month = word(in: HTTPDate.monthNames),
                literal(" ")
            else { return nil }
            // The day is two digits, or a space and one digit.
            guard let day = literal(" ") ? digits(1) : digits(2), literal(" "),
                let (hour, minute, second) = timeOfDay(), literal(" "), let year = digits(4), position == bytes.count
            else { return nil }
            return HTTPDate.timestamp(year: year, month: month + 1, day: day, hour: hour, minute: minute, second: second)
        }

        mutating func timeOfDay() -> (Int, Int, Int)? {
            guard let hour = digits(2), literal(":"), let minute = digits(2), literal(":"), let second = digits(2) else {
                return nil
            }
            return (hour, minute, second)
        }

        /// Exactly `count` ASCII digits (at most 4, so the value is at most 9999).
        mutating func digits(_ count: Int) -> Int? {
            guard bytes.count - position >= count else { return nil }
            var value = 0
            for offset in 0..<count {
                let digit = bytes[position + offset] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                value = value * 10 + Int(digit)
            }
            position += count
            return value
        }

        mutating func literal(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard bytes.count - position >= count else { return false }
            for offset in 0..<count where bytes[position + offset] != text.utf8Start[offset] { return false }
            position += count
            return true
        }

        /// One of `words` (case-sensitive, as the grammar says), returning its index.
        mutating func word(in words: [String]) -> Int? {
            for (index, word) in words.enumerated() {
                let utf8 = Array(word.utf8)
                guard bytes.count - position >= utf8.count, bytes[position..<position + utf8.count].elementsEqual(utf8)
                else { continue }
                position += utf8.count
                return index
            }
            return nil
        }
    }
}
