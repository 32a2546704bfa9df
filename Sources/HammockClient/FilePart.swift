import Foundation

/// A file in a multipart body.
///
/// ```swift
/// let photo = FilePart(filename: "cat.jpg", contentType: "image/jpeg", data: bytes)
/// ```
public struct FilePart: Sendable, Hashable {
    /// The file name sent in `Content-Disposition`.
    public var filename: String
    /// The part's media type.
    public var contentType: String
    /// The file's bytes.
    public var data: [UInt8]

    /// Creates a file part.
    public init(filename: String, contentType: String = "application/octet-stream", data: [UInt8]) {
        self.filename = filename
        self.contentType = contentType
        self.data = data
    }
}

/// One part of a multipart body.
public enum MultipartPart: Sendable, Hashable {
    /// A text field.
    case field(name: String, value: String)
    /// A file.
    case file(name: String, FilePart)
}

enum Multipart {
    /// Encodes parts with a boundary that occurs in none of them.
    static func encode(_ parts: [MultipartPart], makeBoundary: () -> String) -> (body: [UInt8], boundary: String) {
        var boundary = makeBoundary()
        while parts.contains(where: { part in contains(part, Array(boundary.utf8)) }) { boundary = makeBoundary() }
        var body: [UInt8] = []
        func line(_ text: String) { body += Array(text.utf8) + [13, 10] }
        for part in parts {
            line("--\(boundary)")
            switch part {
            case .field(let name, let value):
                line("Content-Disposition: form-data; name=\"\(quoted(name))\"")
                line("")
                body += Array(value.utf8)
            case .file(let name, let file):
                line("Content-Disposition: form-data; name=\"\(quoted(name))\"; filename=\"\(quoted(file.filename))\"")
                line("Content-Type: \(file.contentType)")
                line("")
                body += file.data
            }
            body += [13, 10]
        }
        line("--\(boundary)--")
        return (body, boundary)
    }

    /// Escapes quotes and line breaks in header parameters (WHATWG multipart/form-data encoding).
    static func quoted(_ text: String) -> String {
        text.replacingOccurrences(of: "\"", with: "%22").replacingOccurrences(of: "\r", with: "%0D")
            .replacingOccurrences(of: "\n", with: "%0A")
    }

    static func contains(_ part: MultipartPart, _ needle: [UInt8]) -> Bool {
        let haystacks: [[UInt8]]
        switch part {
        case .field(let name, let value): haystacks = [Array(name.utf8), Array(value.utf8)]
        case .file(let name, let file): haystacks = [Array(name.utf8), Array(file.filename.utf8), file.data]
        }
        return haystacks.contains { haystack in
            guard haystack.count >= needle.count, let first = needle.first else { return false }
            var index = 0
            while index <= haystack.count - needle.count {
                if haystack[index] == first && Array(haystack[index..<index + needle.count]) == needle { return true }
                index += 1
            }
            return false
        }
    }
}
