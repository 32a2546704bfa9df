/// Percent-encoding (RFC 3986) as every Hammock module writes and reads it: one implementation for
/// the client's paths, queries and forms, the server's routes and form bodies, and the resources'
/// URLs.
///
/// ```swift
/// PercentEncoding.encode("a/b c")               // "a%2Fb%20c"
/// PercentEncoding.encodeForm("a b")             // "a+b"
/// PercentEncoding.decode("caf%C3%A9")           // "café"
/// PercentEncoding.decodeForm(Array("a+b".utf8)[...])   // "a b"
/// ```
/// Encoding is strict: only unreserved characters stay as they are, so a `+` stays a plus and a `/`
/// never splits a segment, on any server. Decoding refuses malformed escapes and bytes that are not
/// UTF-8 (`nil`), rather than guessing.
package enum PercentEncoding {
    static let hex = Array("0123456789ABCDEF".utf8)

    /// Whether `byte` is an RFC 3986 unreserved character (`A-Z a-z 0-9 - . _ ~`).
    @inline(__always)
    package static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// For path segments and query items: `/` → `%2F`, `+` → `%2B`, space → `%20`.
    package static func encode(_ text: String) -> String { encode(text, spaceAsPlus: false) }

    /// For `application/x-www-form-urlencoded` bodies: like ``encode(_:)`` but a space is `+`.
    package static func encodeForm(_ text: String) -> String { encode(text, spaceAsPlus: true) }

    /// For one path segment where RFC 3986 allows it as is: unreserved characters and the sub-delimiters,
    /// `:` and `@` stay (`a:b@c` stays), anything else, `/`, `;`, `%`, `?` and `#` included, is escaped.
    /// The resources' child URLs use it, so `resource("/items/a:b")` and `child("a:b")` are one URL.
    package static func encodePathSegment(_ text: String) -> String {
        encode(text) { isUnreserved($0) || "!$&'()*+,=:@".utf8.contains($0) }
    }

    /// Query text written by hand (a template's static query): what a query may hold stays, `%XX`
    /// escapes already there included; anything else (spaces, braces, non-ASCII) is escaped.
    package static func encodeQueryText(_ text: some StringProtocol) -> String {
        encode(String(text)) { isUnreserved($0) || "!$&'()*+,;=:@/?%".utf8.contains($0) }
    }

    /// A request target read from elsewhere (a HAR file's URL): every byte a request line cannot carry
    /// (spaces, controls, non-ASCII) escaped, everything else kept as written, `%XX` escapes included.
    package static func encodeRequestTarget(_ text: some StringProtocol) -> String {
        encode(String(text)) { $0 > 0x20 && $0 < 0x7F }
    }

    /// A request target (`/a%20b/p|q?f[x]=1`) made one that a URL parser takes as it is: every byte RFC 3986
    /// allows in a path or query stays, `%XX` escapes included; anything else (`|`, `{`, `[`, `^`, a space,
    /// a `%` not followed by two hex digits, `#`) is escaped. Foundation's `URL(string:)` escapes such text
    /// itself, `%` included, so `a%20b` became `a%2520b` on the way to a proxy's backend.
    package static func encodeURLTarget(_ text: String) -> String {
        // On every proxied request: the UTF-8 is scanned where it lies, and copied only when a byte
        // needs escaping (most targets need none).
        var contiguous = text
        let escaped = contiguous.withUTF8 { bytes -> String? in
            func keeps(_ index: Int) -> Bool {
                let byte = bytes[index]
                if byte == UInt8(ascii: "%") {
                    return index + 2 < bytes.count && hexValue(bytes[index + 1]) != nil
                        && hexValue(bytes[index + 2]) != nil
                }
                return isUnreserved(byte) || "!$&'()*+,;=:@/?".utf8.contains(byte)
            }
            guard let first = bytes.indices.first(where: { !keeps($0) }) else { return nil }
            var output: [UInt8] = []
            output.reserveCapacity(bytes.count + 16)
            output.append(contentsOf: bytes[..<first])
            for index in first..<bytes.count {
                if keeps(index) {
                    output.append(bytes[index])
                } else {
                    appendEscape(of: bytes[index], to: &output)
                }
            }
            return String(decoding: output, as: UTF8.self)
        }
        return escaped ?? text
    }

    /// A URL's text (`https://hooks.test/a b?f[x]=%41#top`, or a reference such as `/next?f[x]=1`) with its
    /// path, query and fragment made what a URL parser takes as it is (``encodeURLTarget(_:)`` for each), the
    /// scheme and authority as written: for `URL(string:)`, which otherwise escapes `%41` again beside a `[`.
    package static func encodeURLText(_ text: String) -> String {
        let bytes = Array(text.utf8)
        let separator = Array("://".utf8)
        let targetStart: Int
        if let schemeEnd = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }).map({ $0 + separator.count }) {
            guard let start = bytes[schemeEnd...].firstIndex(where: "/?#".utf8.contains) else { return text }
            targetStart = start
        } else {
            targetStart = 0  // a reference without scheme and host (`/next?page=2`, a redirect's)
        }
        let end = bytes[targetStart...].firstIndex(of: UInt8(ascii: "#")) ?? bytes.endIndex
        let head = String(decoding: bytes[..<targetStart], as: UTF8.self)
        let target = encodeURLTarget(String(decoding: bytes[targetStart..<end], as: UTF8.self))
        guard end < bytes.endIndex else { return head + target }
        return head + target + "#" + encodeURLTarget(String(decoding: bytes[(end + 1)...], as: UTF8.self))
    }

    /// Escapes every byte of `text`'s UTF-8 that `keeps` refuses.
    static func encode(_ text: String, keeping keeps: (UInt8) -> Bool) -> String {
        // Most values (ids, names of parameters) need no escape: the text itself, no copy.
        if text.utf8.allSatisfy(keeps) { return text }
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count + 16)
        for byte in text.utf8 {
            if keeps(byte) {
                output.append(byte)
            } else {
                appendEscape(of: byte, to: &output)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    static func encode(_ text: String, spaceAsPlus: Bool) -> String {
        if text.utf8.allSatisfy(isUnreserved) { return text }
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count + 16)
        append(text, spaceAsPlus: spaceAsPlus, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// ``encodeForm(_:)``'s bytes, appended to `output`: for text built as bytes (a `Link` header).
    package static func appendForm(_ text: String, to output: inout [UInt8]) {
        append(text, spaceAsPlus: true, to: &output)
    }

    private static func append(_ text: String, spaceAsPlus: Bool, to output: inout [UInt8]) {
        for byte in text.utf8 {
            if isUnreserved(byte) {
                output.append(byte)
            } else if spaceAsPlus && byte == UInt8(ascii: " ") {
                output.append(UInt8(ascii: "+"))
            } else {
                appendEscape(of: byte, to: &output)
            }
        }
    }

    /// `%XX` for `byte`, appended without an array of its own per escape.
    private static func appendEscape(of byte: UInt8, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "%"))
        output.append(hex[Int(byte >> 4)])
        output.append(hex[Int(byte & 0xF)])
    }

    /// Decodes `%XX` escapes in a path segment or query item (a `+` stays a plus); `nil` for a
    /// malformed escape or bytes that are not UTF-8.
    package static func decode(_ text: Substring) -> String? {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return String(text) }
        return decode(text.utf8, plusIsSpace: false)
    }

    /// Decodes one name or value of an `application/x-www-form-urlencoded` body (WHATWG URL standard:
    /// `+` is a space, `%XX` a byte); `nil` for a malformed escape or bytes that are not UTF-8.
    package static func decodeForm(_ bytes: ArraySlice<UInt8>) -> String? {
        decode(bytes, plusIsSpace: true)
    }

    /// Decodes one name or value of a query string, a piece of a `String` cut at ASCII bytes (so whole
    /// characters). A concrete type: a generic `some Collection<UInt8>` here ran unspecialized from the
    /// query parser's module, through witness tables, and cost 4% of a search page's CPU where the
    /// array copy it replaced cost 1.5%.
    package static func decodeForm(_ bytes: Substring.UTF8View) -> String? {
        // Most names and values have nothing to decode (`_sort=name`): already valid UTF-8, taken as
        // they are without the byte-by-byte copy.
        if !bytes.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) {
            return String(Substring(bytes))
        }
        return decode(bytes, plusIsSpace: true)
    }

    static func decode(_ bytes: some Collection<UInt8>, plusIsSpace: Bool) -> String? {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var iterator = bytes.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    return nil
                }
                output.append(high << 4 | low)
            case UInt8(ascii: "+") where plusIsSpace:
                output.append(UInt8(ascii: " "))
            default:
                output.append(byte)
            }
        }
        return String(validating: output, as: UTF8.self)
    }

    /// The value of one hexadecimal digit, either case.
    package static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
