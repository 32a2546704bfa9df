import Foundation
import HTTPTypes
import HammockJSON
import HammockStore
import HammockWire

/// What a request may ask of the mock for itself, for exploring from a browser or curl: `?_delay=500`
/// or `Prefer: delay=500` (milliseconds) holds its answer, and `Prefer: status=503` answers that status
/// at once, without running the route (so nothing is changed). The answer says what was applied in
/// `Preference-Applied`. Read into an ``Intervention``, the one mechanism faults use too, once a route
/// has matched; `--strict` (``MockServer/Options/allowsOverrides``) turns them off.
enum RequestOverrides {
    /// The longest delay a request may ask for: ten minutes.
    static let longestDelayMilliseconds = 600_000

    static let prefer = HTTPField.Name("Prefer")!
    static let preferenceApplied = HTTPField.Name("Preference-Applied")!

    /// What `request` asks for, `nil` for nothing.
    /// - Throws: 400 ``HTTPProblem`` for a delay or status that is not a number in range.
    static func intervention(askedBy request: MockRequest) throws(HTTPProblem) -> Intervention? {
        var delay: Duration?
        var status: HTTPResponse.Status?
        var applied: [String] = []
        if let query = request.query, Self.mentionsDelay(query) {
            let items: [ListQuery.Item]
            do { items = try ListQuery.items(of: query) } catch { throw error.problem }
            for item in items where item.name == "_delay" {
                delay = try Self.delay(item.value, parameter: "_delay")
                applied.append("delay=\(item.value)")
            }
        }
        // The combined value (several fields joined with ", "): `[values:]` would allocate an array on
        // every request, which has no Prefer at all.
        if let value = request.headerFields[Self.prefer] {
            for preference in value.split(separator: ",") {
                let parts = preference.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map {
                    $0.trimmingCharacters(in: .whitespaces)
                }
                guard parts.count == 2 else { continue }
                // RFC 7240: a preference the server does not know is ignored.
                switch parts[0].lowercased() {
                case "delay":
                    delay = try Self.delay(parts[1], parameter: "Prefer: delay")
                    applied.append("delay=\(parts[1])")
                case "status":
                    guard let code = Int(parts[1]), (200...599).contains(code) else {
                        throw HTTPProblem.badRequest(
                            "'Prefer: status=\(parts[1].prefix(40))' must name a status from 200 to 599")
                    }
                    status = HTTPResponse.Status(code: code)
                    applied.append("status=\(code)")
                default: continue
                }
            }
        }
        guard !applied.isEmpty else { return nil }
        return Intervention(
            origin: .asked(applied: applied.joined(separator: ", ")), hold: delay, answer: status.map(Self.response(for:)))
    }

    /// `request` without what it asked of the mock: `_delay` items of its query, and the `delay` and
    /// `status` preferences of `Prefer` (other preferences, `return=minimal`, stay for the route).
    static func withoutAsks(_ request: MockRequest) -> MockRequest {
        var request = request
        if let query = request.query, mentionsDelay(query) {
            let kept = query.split(separator: "&", omittingEmptySubsequences: false).filter { item in
                let name = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0]
                return PercentEncoding.decodeForm(Array(name.utf8)[...]) != "_delay"
            }
            request.query = kept.isEmpty ? nil : kept.joined(separator: "&")
        }
        if let value = request.headerFields[prefer] {
            let kept = value.split(separator: ",").filter { preference in
                let name = preference.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0]
                    .trimmingCharacters(in: .whitespaces).lowercased()
                return name != "delay" && name != "status"
            }
            request.headerFields[prefer] =
                kept.isEmpty ? nil : kept.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")
        }
        return request
    }

    private static let delayBytes = Array("_delay".utf8)

    /// Whether `query` holds the bytes `_delay`: a plain loop. `contains` on a String with Foundation
    /// imported is CFStringFind (0.7% of a sorted page's CPU), and `utf8.firstRange(of:)` is
    /// _StringProcessing's generic search, which was worse: 10% of a sorted page's CPU at a million
    /// records (4 µs a request, measured with perf).
    static func mentionsDelay(_ query: String) -> Bool {
        let needle = delayBytes
        var query = query
        return query.withUTF8 { bytes in
            guard bytes.count >= needle.count else { return false }
            for start in 0...(bytes.count - needle.count) where bytes[start] == UInt8(ascii: "_") {
                var matched = 1
                while matched < needle.count, bytes[start + matched] == needle[matched] { matched += 1 }
                if matched == needle.count { return true }
            }
            return false
        }
    }

    static func delay(_ text: String, parameter: String) throws(HTTPProblem) -> Duration {
        guard let milliseconds = Int(text), (0...longestDelayMilliseconds).contains(milliseconds) else {
            throw HTTPProblem(
                .badRequest,
                detail: "'\(parameter)' must be milliseconds from 0 to \(longestDelayMilliseconds); '\(text.prefix(40))' is not",
                extensions: ["parameter": .string(parameter), "minimum": 0, "maximum": .integer(longestDelayMilliseconds)])
        }
        return .milliseconds(milliseconds)
    }

    /// The answer to `Prefer: status=N`: a problem for an error, nothing for the rest.
    static func response(for status: HTTPResponse.Status) -> MockResponse {
        guard status.code >= 400 else { return MockResponse(status: status) }
        return HTTPProblem(
            status, detail: "Answered \(status.code) because the request asked for it (Prefer: status=\(status.code))"
        )
        .response
    }
}
