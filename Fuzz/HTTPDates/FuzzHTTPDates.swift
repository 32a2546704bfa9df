import Foundation
import FuzzSupport
import HammockWire

/// HTTP date parsing: never a crash, and any date it accepts formats and parses back to itself.
@main
struct FuzzTarget {
    static func main() {
        Fuzzer.run { data, count in
            let text = String(decoding: Fuzzer.bytes(data, count), as: UTF8.self)
            let now = Date(timeIntervalSince1970: 1_700_000_000)
            guard let date = HTTPDate.parse(text, now: now) else { return 0 }
            let formatted = HTTPDate.format(date)
            Fuzzer.check(formatted.utf8.count == 29, "formatted '\(formatted)' is not an IMF-fixdate")
            Fuzzer.check(HTTPDate.parse(formatted, now: now) == date, "'\(text)' → '\(formatted)' does not parse back")
            return 0
        }
    }
}
