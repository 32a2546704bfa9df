/// A `multipart/form-data` body (RFC 7578) taken apart into its named parts.
///
/// ```swift
/// let form = try MultipartFormData(parsing: body, contentType: "multipart/form-data; boundary=X")
/// form.parts.first?.name       // "avatar"
/// form.parts.first?.filename   // "me.png"
/// ```
///
/// Strict where a lenient reading would guess: delimiters are `--boundary` at the start of a line ended by
/// CRLF (RFC 2046 §5.1.1), every part names itself in `Content-Disposition: form-data; name=…`, and the
/// closing `--boundary--` must come. Bounded for a hostile client: at most ``mostParts`` parts and
/// ``mostHeaderBytes`` of headers each; the body itself is bounded by the caller's size limit.
package struct MultipartFormData: Sendable, Equatable {
    /// One part: a form field's text or a file.
    package struct Part: Sendable, Equatable {
        /// The form field's name (`name=` of `Content-Disposition`).
        package var name: String
        /// The file's name, when the part is a file (`filename=`, or `filename*=` in RFC 8187's form).
        package var filename: String?
        /// The part's `Content-Type`, lowercased without parameters, when it has one.
        package var contentType: String?
        /// The part's bytes, exactly as sent.
        package var body: [UInt8]

        /// A part.
        package init(name: String, filename: String? = nil, contentType: String? = nil, body: [UInt8]) {
            self.name = name
            self.filename = filename
            self.contentType = contentType
            self.body = body
        }
    }

    /// Why a body is not `multipart/form-data`: what a 400's detail says.
    package struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong, in a sentence's middle: "the body ends before its closing boundary".
        package var reason: String
        package var description: String { reason }
    }

    /// Why 1,000: a form with more fields than that is no form a person fills in, and each part costs an
    /// allocation or two; a client that sends 100,000 empty parts in 4 MB must not make 100,000 of them.
    package static let mostParts = 1_000
    /// A part's headers (`Content-Disposition`, `Content-Type`) take about 100 bytes; 16 KiB is the
    /// limit HTTP servers put on a request's whole header block.
    package static let mostHeaderBytes = 16_384

    /// The parts in the order sent.
    package var parts: [Part]

    /// Takes `body` apart with the boundary of `contentType` (`multipart/form-data; boundary=…`).
    package init(parsing body: [UInt8], contentType: String) throws(Failure) {
        guard let boundary = HeaderValue(parsing: contentType).parameter("boundary") else {
            throw Failure(reason: "the Content-Type has no boundary parameter")
        }
        try self.init(parsing: body, boundary: boundary)
    }

    /// Takes `body` apart at `boundary`.
    package init(parsing body: [UInt8], boundary: String) throws(Failure) {
        // RFC 2046 §5.1.1: 1 to 70 characters, the last not a space.
        guard (1...70).contains(boundary.utf8.count), !boundary.hasSuffix(" ") else {
            throw Failure(reason: "the boundary must have 1 to 70 characters")
        }
        let delimiter = Array("--\(boundary)".utf8)
        let crlf: [UInt8] = [13, 10]
        // The first delimiter opens the body or a line (what comes before it is a preamble, ignored).
        var position: Int
        if body.starts(with: delimiter) {
            position = delimiter.count
        } else if let found = Self.find(crlf + delimiter, in: body, from: 0) {
            position = found + 2 + delimiter.count
        } else {
            throw Failure(reason: "the body has no '--\(boundary.prefix(70))' delimiter")
        }
        var parts: [Part] = []
        while true {
            // After a delimiter: `--` closes the body; else optional padding and CRLF open a part.
            if body[position...].starts(with: [45, 45]) { break }
            while position < body.count, body[position] == 32 || body[position] == 9 { position += 1 }
            guard body[position...].starts(with: crlf) else {
                throw Failure(reason: "a delimiter is not followed by a line break")
            }
            position += 2
            guard parts.count < Self.mostParts else { throw Failure(reason: "more than \(Self.mostParts) parts") }
            // Headers up to an empty line; none at all is an empty line at once.
            let headerEnd: Int
            if body[position...].starts(with: crlf) {
                headerEnd = position
            } else if let found = Self.find([13, 10, 13, 10], in: body, from: position, within: Self.mostHeaderBytes) {
                headerEnd = found + 2
            } else {
                throw Failure(reason: "a part's headers do not end in an empty line within \(Self.mostHeaderBytes) bytes")
            }
            var part = try Self.part(headers: body[position..<headerEnd])
            let start = headerEnd + 2
            guard let end = Self.find(crlf + delimiter, in: body, from: start) else {
                throw Failure(reason: "the body ends before its closing '--\(boundary.prefix(70))--'")
            }
            part.body = Array(body[start..<end])
            parts.append(part)
            position = end + 2 + delimiter.count
        }
        self.parts = parts
    }

    /// The part its headers describe, without its body yet.
    static func part(headers: ArraySlice<UInt8>) throws(Failure) -> Part {
        guard let text = String(validating: headers, as: UTF8.self) else {
            throw Failure(reason: "a part's headers are not UTF-8")
        }
        var name: String?
        var filename: String?
        var contentType: String?
        for line in text.split(separator: "\r\n", omittingEmptySubsequences: true) {
            guard let colon = line.firstIndex(of: ":") else {
                throw Failure(reason: "a part's header line '\(line.prefix(60))' has no ':'")
            }
            let field = line[..<colon].lowercased()
            let value = String(line[line.index(after: colon)...])
            switch field {
            case "content-disposition":
                let disposition = HeaderValue(parsing: value)
                guard disposition.value.lowercased() == "form-data" else {
                    throw Failure(reason: "a part's Content-Disposition is '\(disposition.value.prefix(40))', not form-data")
                }
                name = disposition.parameter("name")
                filename =
                    disposition.parameter("filename*").flatMap(HeaderValue.extendedValue) ?? disposition.parameter("filename")
            case "content-type":
                contentType = HeaderValue.mediaType(of: value)
            default:
                continue
            }
        }
        guard let name else { throw Failure(reason: "a part has no Content-Disposition with a name") }
        return Part(name: name, filename: filename, contentType: contentType, body: [])
    }

    /// The index of the first `needle` in `haystack` at or after `start` (and starting before
    /// `start + within`), if any.
    package static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int, within: Int = .max) -> Int? {
        guard let first = needle.first, haystack.count >= needle.count else { return nil }
        let last = min(haystack.count - needle.count, start > .max - within ? .max : start + within)
        var index = start
        while index <= last {
            // Skipping to the needle's first byte (a CR here) makes the scan a memchr in practice.
            guard let candidate = haystack[index...last].firstIndex(of: first) else { return nil }
            if haystack[candidate..<(candidate + needle.count)].elementsEqual(needle) { return candidate }
            index = candidate + 1
        }
        return nil
    }
}
