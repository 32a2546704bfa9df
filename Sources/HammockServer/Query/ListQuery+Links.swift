public import HTTPTypes
import HammockStore
import HammockWire

extension HTTPField.Name {
    /// `X-Total-Count`: how many records matched before a page was cut.
    public static let totalCount = HTTPField.Name("X-Total-Count")!
    /// `X-Hammock-Ignored-Query`: the query parameters that named no field and no option.
    public static let ignoredQuery = HTTPField.Name("X-Hammock-Ignored-Query")!
    /// `Link` (RFC 8288).
    public static let link = HTTPField.Name("Link")!
    /// `X-Next-Cursor`: the `_cursor` of the next page of a list asked for by cursor; absent on the last.
    public static let nextCursor = HTTPField.Name("X-Next-Cursor")!
}

extension ListQuery {
    /// The header fields of a list answer: the total and `Link` to the first, previous, next and last
    /// pages when a window was asked for (to the next only, and its cursor, when asked by `_cursor`),
    /// and the ignored parameters when there are any.
    public func responseFields(total: Int, path: String) -> HTTPFields {
        var fields = HTTPFields()
        if let window {
            // Appended, not set by subscript: the fields are new, and the setter looks for an earlier
            // field of each name first.
            fields.append(HTTPField(name: .totalCount, value: String(total)))
            if usesCursor, let next = nextCursor(for: window, total: total) {
                fields.append(HTTPField(name: .nextCursor, value: next.token))
                var link = LinkWriter(path: path, kept: keptParameters)
                link.start()
                link.parameter(documentedName("_cursor"), next.token)
                link.parameter(documentedName("_limit"), next.size)
                link.finish(rel: "next")
                fields.append(HTTPField(name: .link, value: link.text))
            } else if !usesCursor, let links = links(for: window, total: total, path: path) {
                fields.append(HTTPField(name: .link, value: links))
            }
        }
        if !ignored.isEmpty { fields.append(HTTPField(name: .ignoredQuery, value: ignored.joined(separator: ", "))) }
        return fields
    }

    /// The cursor of the page after `window` and its size, unless `window` reaches the end.
    func nextCursor(for window: Window, total: Int) -> (token: String, size: Int)? {
        guard case .range(let start, let end?) = window.clamped, end > start, end < total else { return nil }
        return (ListCursor.token(for: end), end - start)
    }

    /// The name the client used for one of the query language's parameters: the API's own where it has one.
    func documentedName(_ name: String) -> String {
        // Most resources rename nothing: no lookup (hashing the name cost 1% of a sorted page).
        documentedNames.isEmpty ? name : documentedNames[name] ?? name
    }

    /// The parameters a link to another page keeps, as the client sent them, each followed by `&`, as
    /// UTF-8.
    var keptParameters: [UInt8] {
        var kept: [UInt8] = []
        for item in items where !Self.isWindowParameter(item.name) {
            PercentEncoding.appendForm(documentedName(item.name), to: &kept)
            kept.append(UInt8(ascii: "="))
            PercentEncoding.appendForm(item.value, to: &kept)
            kept.append(UInt8(ascii: "&"))
        }
        return kept
    }

    func links(for window: Window, total: Int, path: String) -> String? {
        // Every number below is a page from 1 or a position from 0 of a clamped window, and `total`
        // is a count: no sum or difference can leave `Int` except where it saturates.
        var writer = LinkWriter(path: path, kept: keptParameters)
        switch window.clamped {
        case .page(let number, let size):
            let last = total <= 0 ? 1 : (total - 1) / size + 1
            let pageName = documentedName("_page")
            let sizeName = documentedName("_per_page")
            func page(_ number: Int, _ rel: String) {
                writer.start()
                writer.parameter(pageName, number)
                writer.parameter(sizeName, size)
                writer.finish(rel: rel)
            }
            page(1, "first")
            if number > 1 { page(min(number - 1, last), "prev") }
            if number < last { page(number + 1, "next") }
            page(last, "last")
        case .range(let start, let end):
            guard let end, end > start else { return nil }
            let size = end - start
            let startName = documentedName("_start")
            let sizeName = documentedName(rangeUsesEnd ? "_end" : "_limit")
            func range(_ first: Int, _ rel: String) {
                writer.start()
                writer.parameter(startName, first)
                writer.parameter(sizeName, rangeUsesEnd ? first.saturatingAdd(size) : size)
                writer.finish(rel: rel)
            }
            let lastStart = total <= 0 ? 0 : (total - 1) / size * size
            range(0, "first")
            if start > 0 { range(max(0, min(start - size, lastStart)), "prev") }
            if start < total - size { range(start + size, "next") }
            range(lastStart, "last")
        }
        return writer.text
    }
}

/// A `Link` header's value (RFC 8288) written as bytes: this header goes out on every paged answer, and
/// built by appending to a `String` it cost 5.5% of a sorted page's CPU at a million records (the
/// strings' generic append path), against under 1% written this way.
struct LinkWriter {
    private var bytes: [UInt8] = []
    /// The path, `?`, and the parameters every link keeps (each followed by `&`).
    private let prefix: [UInt8]
    private var parameters = 0

    init(path: String, kept: [UInt8]) {
        var prefix: [UInt8] = []
        prefix.reserveCapacity(path.utf8.count + 1 + kept.count)
        prefix.append(contentsOf: path.utf8)
        prefix.append(UInt8(ascii: "?"))
        prefix.append(contentsOf: kept)
        self.prefix = prefix
        // Four links of the prefix and two parameters each.
        bytes.reserveCapacity(4 * (prefix.count + 48))
    }

    /// Begins a link: `<path?kept`, after a `, ` when it is not the first.
    mutating func start() {
        if !bytes.isEmpty { bytes.append(contentsOf: [UInt8(ascii: ","), UInt8(ascii: " ")]) }
        bytes.append(UInt8(ascii: "<"))
        bytes.append(contentsOf: prefix)
        parameters = 0
    }

    mutating func parameter(_ name: String, _ value: Int) {
        separate(name)
        Self.appendDecimal(value, to: &bytes)
    }

    mutating func parameter(_ name: String, _ value: String) {
        separate(name)
        bytes.append(contentsOf: value.utf8)
    }

    private mutating func separate(_ name: String) {
        if parameters > 0 { bytes.append(UInt8(ascii: "&")) }
        parameters += 1
        bytes.append(contentsOf: name.utf8)
        bytes.append(UInt8(ascii: "="))
    }

    /// Ends a link: `>; rel="REL"`.
    mutating func finish(rel: String) {
        bytes.append(contentsOf: #">; rel=""#.utf8)
        bytes.append(contentsOf: rel.utf8)
        bytes.append(UInt8(ascii: "\""))
    }

    var text: String { String(decoding: bytes, as: UTF8.self) }

    /// `value` in decimal, `-` first when negative (`Int.min` included: its magnitude is taken as a `UInt`).
    static func appendDecimal(_ value: Int, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        let magnitude = value.magnitude
        var digits = 1
        var rest = magnitude
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        // Room made first, then filled from the last digit: reversing a slice of the array afterwards
        // copied it (a fifth of the links' cost).
        bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: digits))
        bytes.withUnsafeMutableBufferPointer { buffer in
            var position = buffer.count
            var rest = magnitude
            repeat {
                position -= 1
                buffer[position] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
        }
    }
}
