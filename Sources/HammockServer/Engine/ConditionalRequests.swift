import Foundation
import HTTPTypes

/// Validators on GET and HEAD responses, and 304 Not Modified for requests that already hold the
/// current representation (RFC 9110 §8.8 and §13).
enum ConditionalRequests {
    /// A strong entity tag of the representation's bytes: a 64-bit multiply-xorshift hash taken eight
    /// bytes at a time (fast on long lists; an ETag needs spread, not cryptographic strength).
    static func entityTag(of body: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(body.count)
        body.withUnsafeBytes { raw in
            var index = 0
            while index + 8 <= raw.count {
                hash = (hash ^ raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)) &* 0x9E37_79B9_7F4A_7C15
                hash ^= hash >> 29
                index += 8
            }
            while index < raw.count {
                hash = (hash ^ UInt64(raw[index])) &* 0x0000_0100_0000_01B3
                index += 1
            }
        }
        hash ^= hash >> 32
        let hex = String(hash, radix: 16)
        return "\"" + String(repeating: "0", count: 16 - hex.count) + hex + "\""
    }

    /// Adds `ETag` and `Last-Modified` to a successful GET or HEAD response, and turns it into a 304 when
    /// the request's validators match. `If-None-Match` wins over `If-Modified-Since` when both are sent.
    static func apply(to response: inout MockResponse, request: MockRequest, lastModified: Date) {
        guard request.method == .get || request.method == .head, response.status == .ok else { return }
        let tag = entityTag(of: response.body)
        let modified = Date(timeIntervalSince1970: lastModified.timeIntervalSince1970.rounded(.down))
        response.headerFields[.eTag] = tag
        response.headerFields[.lastModified] = HTTPDate.format(modified)
        let notModified: Bool
        if let ifNoneMatch = request.headerFields[.ifNoneMatch] {
            notModified = matches(ifNoneMatch, tag)
        } else if let ifModifiedSince = request.headerFields[.ifModifiedSince].flatMap(HTTPDate.parse) {
            notModified = modified <= ifModifiedSince
        } else {
            notModified = false
        }
        guard notModified else { return }
        response.status = .notModified
        response.body = []
        response.headerFields[.contentLength] = nil
        response.headerFields[.contentType] = nil
    }

    /// Weak comparison (RFC 9110 §8.8.3.2) against a list of tags, or `*`.
    static func matches(_ header: String, _ tag: String) -> Bool {
        let opaque = tag
        for candidate in header.split(separator: ",") {
            var value = candidate.trimmingCharacters(in: .whitespaces)
            if value == "*" { return true }
            if value.hasPrefix("W/") { value.removeFirst(2) }
            if value == opaque { return true }
        }
        return false
    }
}

/// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the HTTP date format, without shared formatters.
enum HTTPDate {
    static let days = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]  // 1970-01-01 was a Thursday
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func format(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let dayNumber = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - dayNumber * 86_400
        let (year, month, day) = civil(fromDays: dayNumber)
        let weekday = days[((dayNumber % 7) + 7) % 7]
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }
        return "\(weekday), \(two(day)) \(months[month - 1]) \(year) "
            + "\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) GMT"
    }

    static func parse(_ text: String) -> Date? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[5] == "GMT", let day = Int(parts[1]),
            let month = months.firstIndex(of: String(parts[2])), let year = Int(parts[3])
        else { return nil }
        let time = parts[4].split(separator: ":").compactMap { Int($0) }
        guard time.count == 3, (1...31).contains(day), (0...23).contains(time[0]), (0...59).contains(time[1]),
            (0...60).contains(time[2])
        else { return nil }
        let dayNumber = days(fromCivil: year, month + 1, day)
        return Date(timeIntervalSince1970: Double(dayNumber * 86_400 + time[0] * 3600 + time[1] * 60 + time[2]))
    }

    /// Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func days(fromCivil year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
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
}
