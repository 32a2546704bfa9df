import Foundation
import HTTPTypes
package import HammockJSON
import HammockWire

/// What a recording never writes: credentials in header fields, JSON members, form fields and query
/// items, and the same values wherever else they turn up (an echo service repeats the `Authorization` it
/// was sent in its body; a login answer's token comes back in the next request's header).
///
/// ```swift
/// var redaction = RecordingRedaction()
/// redaction.headers.insert("x-tenant-key")
/// redaction.members.insert("ssn")
/// let recording = ProxyRecording(redaction: redaction)
/// ```
/// A redacted value becomes `REDACTED`; an `Authorization` keeps its scheme (`Bearer REDACTED`) and a
/// cookie its name and attributes (`session=REDACTED; Path=/`), so the recording still says what was sent.
/// Names compare without regard to case.
public struct RecordingRedaction: Sendable, Hashable {
    /// Header fields whose values are redacted, lowercased.
    public var headers: Set<String>
    /// JSON members, form fields and query items whose values are redacted, lowercased.
    public var members: Set<String>

    /// `Authorization`, `Proxy-Authorization`, `Cookie`, `Set-Cookie` and the usual API-key fields.
    public static let defaultHeaders: Set<String> = [
        "authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "x-auth-token", "x-csrf-token",
    ]
    /// Passwords, secrets, tokens and API keys by their usual names (OAuth 2.0's among them, RFC 6749 §5.1).
    public static let defaultMembers: Set<String> = [
        "password", "passwd", "secret", "client_secret", "token", "access_token", "refresh_token", "id_token",
        "api_key", "apikey", "accesstoken", "refreshtoken",
    ]
    /// What a redacted value becomes.
    public static let placeholder = "REDACTED"
    /// A value shorter than this is redacted where it stands but not searched for elsewhere: `1234` or
    /// `test` would otherwise be replaced in every body the recording holds.
    static let shortestSearched = 6

    /// The defaults, plus `headers` and `members` (any case).
    public init(headers: [String] = [], members: [String] = []) {
        self.headers = Self.defaultHeaders.union(headers.map { $0.lowercased() })
        self.members = Self.defaultMembers.union(members.map { $0.lowercased() })
    }

    /// Whether a JSON member, form field or query item of this name is redacted: the members, and the
    /// header names too (an echo answers `{"headers": {"Authorization": …}}`).
    func redactsMember(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return members.contains(lowered) || headers.contains(lowered)
    }

    /// A header field's value, redacted if its name says so; the secrets it held are added to `secrets`.
    package func header(_ name: String, _ value: String, secrets: inout Set<String>) -> String {
        let lowered = name.lowercased()
        guard headers.contains(lowered) else { return value }
        switch lowered {
        case "authorization", "proxy-authorization":
            // `Bearer abc` keeps `Bearer`; a value without a scheme goes whole.
            let parts = value.split(separator: " ", maxSplits: 1)
            if parts.count == 2 {
                Self.remember(String(parts[1]), in: &secrets)
                if parts[0].lowercased() == "basic", let decoded = Base64Text.decode(String(parts[1])) {
                    Self.remember(decoded, in: &secrets)
                    if let colon = decoded.firstIndex(of: ":") {
                        Self.remember(String(decoded[decoded.index(after: colon)...]), in: &secrets)
                    }
                }
                return "\(parts[0]) \(Self.placeholder)"
            }
            Self.remember(value, in: &secrets)
            return Self.placeholder
        case "cookie":
            return value.split(separator: ";").map { pair in
                Self.redactPair(pair.trimmingCharacters(in: .whitespaces), secrets: &secrets)
            }.joined(separator: "; ")
        case "set-cookie":
            // The first pair is the cookie; the attributes after it (Path, Expires, HttpOnly) stay.
            let parts = value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)
            let cookie = Self.redactPair(parts[0].trimmingCharacters(in: .whitespaces), secrets: &secrets)
            return parts.count == 2 ? cookie + ";" + parts[1] : cookie
        default:
            Self.remember(value, in: &secrets)
            return Self.placeholder
        }
    }

    /// `name=value` as `name=REDACTED`.
    static func redactPair(_ pair: String, secrets: inout Set<String>) -> String {
        guard let equals = pair.firstIndex(of: "=") else {
            remember(pair, in: &secrets)
            return placeholder
        }
        remember(String(pair[pair.index(after: equals)...]), in: &secrets)
        return pair[..<equals] + "=" + placeholder
    }

    static func remember(_ value: String, in secrets: inout Set<String>) {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if trimmed.count >= shortestSearched, trimmed != placeholder { secrets.insert(trimmed) }
    }

    /// `value` with the members this redaction names replaced, at any depth.
    package func json(_ value: JSON, secrets: inout Set<String>) -> JSON {
        switch value {
        case .object(let object):
            var redacted = JSONObject(minimumCapacity: object.count)
            for (key, member) in object {
                if redactsMember(key), !member.isNull {
                    collect(member, into: &secrets)
                    redacted[key] = .string(Self.placeholder)
                } else {
                    redacted[key] = json(member, secrets: &secrets)
                }
            }
            return .object(redacted)
        case .array(let elements):
            return .array(elements.map { json($0, secrets: &secrets) })
        default:
            return value
        }
    }

    /// Every string and number in a redacted value, as secrets.
    private func collect(_ value: JSON, into secrets: inout Set<String>) {
        switch value {
        case .string(let text): Self.remember(text, in: &secrets)
        case .object(let object): for member in object.values { collect(member, into: &secrets) }
        case .array(let elements): for element in elements { collect(element, into: &secrets) }
        default: break
        }
    }

    /// A query or form body (`a=1&password=x`) with the named items' values replaced; names and order
    /// stay, and so does every byte of the items not named.
    package func formEncoded(_ text: String, secrets: inout Set<String>) -> String {
        text.split(separator: "&", omittingEmptySubsequences: false).map { item -> String in
            guard let equals = item.firstIndex(of: "=") else { return String(item) }
            let name = PercentEncoding.decodeForm(Array(item[..<equals].utf8)[...]) ?? String(item[..<equals])
            guard redactsMember(name) else { return String(item) }
            let raw = item[item.index(after: equals)...]
            Self.remember(PercentEncoding.decodeForm(Array(raw.utf8)[...]) ?? String(raw), in: &secrets)
            Self.remember(String(raw), in: &secrets)
            return item[...equals] + Self.placeholder
        }.joined(separator: "&")
    }

    /// Text that holds JSON members without being one JSON document (JSON Lines, a body cut short or
    /// broken, JSON inside HTML or a script, `text/plain`): each `"name": "value"` whose name this
    /// redaction names has its value replaced, as ``json(_:secrets:)`` would; `nil` when none is.
    /// A linear scan of the bytes, not a parse: whatever is not a quoted member stays as it is.
    package func jsonMembers(inText bytes: [UInt8], secrets: inout Set<String>) -> [UInt8]? {
        let quote = UInt8(ascii: "\"")
        let backslash = UInt8(ascii: "\\")
        let colon = UInt8(ascii: ":")
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        /// The index of the quote closing the string whose opening quote is at `start`, if it closes.
        func closing(from start: Int) -> Int? {
            var index = start + 1
            while index < bytes.count {
                if bytes[index] == backslash {
                    index += 2
                } else if bytes[index] == quote {
                    return index
                } else {
                    index += 1
                }
            }
            return nil
        }
        var output: [UInt8] = []
        var copied = 0
        var index = 0
        while index < bytes.count {
            guard bytes[index] == quote, let end = closing(from: index) else {
                index += 1
                continue
            }
            var next = end + 1
            while next < bytes.count, isSpace(bytes[next]) { next += 1 }
            guard next < bytes.count, bytes[next] == colon,
                let name = String(validating: bytes[(index + 1)..<end], as: UTF8.self), redactsMember(name)
            else {
                index = end + 1
                continue
            }
            next += 1
            while next < bytes.count, isSpace(bytes[next]) { next += 1 }
            // A number (a PIN) goes as ``json(_:secrets:)`` would have it go: the same placeholder, quoted.
            if next < bytes.count, bytes[next] == UInt8(ascii: "-") || (0x30...0x39).contains(bytes[next]) {
                var numberEnd = next
                while numberEnd < bytes.count, Self.numberBytes.contains(bytes[numberEnd]) { numberEnd += 1 }
                Self.remember(String(decoding: bytes[next..<numberEnd], as: UTF8.self), in: &secrets)
                output += bytes[copied..<next]
                output += Array("\"\(Self.placeholder)\"".utf8)
                copied = numberEnd
                index = numberEnd
                continue
            }
            guard next < bytes.count, bytes[next] == quote, let valueEnd = closing(from: next) else {
                index = next
                continue
            }
            let raw = Array(bytes[(next + 1)..<valueEnd])
            // The value as the app meant it (escapes read), and as written.
            if let value = try? JSON(parsing: [quote] + raw + [quote]), let text = value.stringValue {
                Self.remember(text, in: &secrets)
            }
            Self.remember(String(decoding: raw, as: UTF8.self), in: &secrets)
            output += bytes[copied...next]
            output += Array(Self.placeholder.utf8)
            copied = valueEnd
            index = valueEnd + 1
        }
        guard copied > 0 else { return nil }
        output += bytes[copied...]
        return output
    }

    /// What a JSON number is written with.
    private static let numberBytes = Set(Array("0123456789+-.eE".utf8))

    /// `secrets` in the order ``scrub(_:_:)-(String,_)`` replaces them: longest first, so a token that
    /// holds a shorter secret is replaced whole (then by text, so a recording is written the same each time).
    static func replacementOrder(_ secrets: Set<String>) -> [String] {
        secrets.sorted { $0.count != $1.count ? $0.count > $1.count : $0 < $1 }
    }

    /// `text` with every secret replaced, longest first (a token that contains another is replaced whole).
    static func scrub(_ text: String, _ secrets: [String]) -> String {
        var text = text
        for secret in secrets where text.contains(secret) {
            text = text.replacingOccurrences(of: secret, with: placeholder)
        }
        return text
    }

    /// Header fields with every secret replaced in their values.
    static func scrub(_ fields: [HTTPField], _ secrets: [String]) -> [HTTPField] {
        guard !secrets.isEmpty else { return fields }
        return fields.map { HTTPField(name: $0.name, value: scrub($0.value, secrets)) }
    }

    /// `value` with every secret replaced in its strings and member names.
    static func scrub(_ value: JSON, _ secrets: [String]) -> JSON {
        guard !secrets.isEmpty else { return value }
        switch value {
        case .string(let text):
            return .string(scrub(text, secrets))
        case .object(let object):
            var scrubbed = JSONObject(minimumCapacity: object.count)
            for (key, member) in object { scrubbed[scrub(key, secrets)] = scrub(member, secrets) }
            return .object(scrubbed)
        case .array(let elements):
            return .array(elements.map { scrub($0, secrets) })
        default:
            return value
        }
    }
}

/// Base64 of UTF-8 text, for `Basic` credentials.
enum Base64Text {
    static func decode(_ text: String) -> String? {
        guard let data = Data(base64Encoded: text) else { return nil }
        return String(data: data, encoding: .utf8)
    }
}
