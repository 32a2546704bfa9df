import HammockTestSupport
import HammockWire
import Testing

@Suite("multipart/form-data bodies")
struct MultipartFormDataTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test("Parts are read with their names, file names, types and exact bytes; a preamble and an epilogue are ignored")
    func parts() throws {
        let body =
            Self.bytes(
                "preamble\r\n--XyZ\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nA \"cat\"\r\n"
                    + "--XyZ \t\r\ncontent-disposition: Form-Data; name=photo; filename*=UTF-8''ch%C3%A2t.jpg\r\n"
                    + "Content-Type: Image/JPEG; q=1\r\n\r\n") + [0, 13, 10, 45, 45, 255]
            + Self.bytes("\r\n--XyZ\r\nContent-Disposition: form-data; name=\"empty\"\r\n\r\n\r\n--XyZ--\r\nepilogue")
        let form = try MultipartFormData(parsing: body, contentType: "multipart/form-data; boundary=\"XyZ\"")
        #expect(
            form.parts == [
                .init(name: "title", body: Self.bytes("A \"cat\"")),
                .init(name: "photo", filename: "chât.jpg", contentType: "image/jpeg", body: [0, 13, 10, 45, 45, 255]),
                .init(name: "empty", body: []),
            ])
    }

    @Test("A body written by any boundary and parts reads back the same parts (property, seeded)")
    func roundTrip() throws {
        var random = SplitMix64(seed: 7)
        // Bytes that look like delimiters and line breaks, to catch a parser that splits too early.
        let alphabet: [UInt8] = Array("-\r\nab=\"".utf8) + [0, 255]
        for _ in 0..<500 {
            let boundary =
                "b"
                + String((0..<Int.random(in: 0...20, using: &random)).map { _ in "x-_0".randomElement(using: &random) ?? "x" })
            var parts: [MultipartFormData.Part] = []
            var body: [UInt8] = []
            for index in 0..<Int.random(in: 0...4, using: &random) {
                var content = (0..<Int.random(in: 0...30, using: &random)).map { _ in alphabet.randomElement(using: &random) ?? 0
                }
                // A part's content cannot hold its own delimiter (a writer picks a boundary that occurs in none).
                while MultipartFormData.find(Self.bytes("\r\n--" + boundary), in: [13, 10] + content, from: 0) != nil {
                    content.removeLast()
                }
                let part = MultipartFormData.Part(
                    name: "f\(index)", filename: index % 2 == 0 ? nil : "n\(index).bin", body: content)
                parts.append(part)
                body += Self.bytes("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(part.name)\"")
                if let filename = part.filename { body += Self.bytes("; filename=\"\(filename)\"") }
                body += Self.bytes("\r\n\r\n") + content + Self.bytes("\r\n")
            }
            body += Self.bytes("--\(boundary)--\r\n")
            #expect(try MultipartFormData(parsing: body, boundary: boundary).parts == parts)
        }
    }

    @Test(
        "A body that is not multipart as its Content-Type says is refused with the reason",
        arguments: [
            ("multipart/form-data", "--a\r\n\r\nx\r\n--a--", "no boundary"),
            ("multipart/form-data; boundary=", "", "1 to 70"),
            ("multipart/form-data; boundary=\(String(repeating: "b", count: 71))", "", "1 to 70"),
            ("multipart/form-data; boundary=a", "no delimiter here", "no '--a' delimiter"),
            ("multipart/form-data; boundary=a", "--a\r\nContent-Disposition: form-data; name=x\r\n\r\nopen", "ends before"),
            (
                "multipart/form-data; boundary=a", "--a\r\nContent-Disposition: form-data\r\n\r\nx\r\n--a--",
                "no Content-Disposition with a name"
            ),
            (
                "multipart/form-data; boundary=a", "--a\r\nContent-Disposition: attachment; name=x\r\n\r\nx\r\n--a--",
                "not form-data"
            ),
            ("multipart/form-data; boundary=a", "--a\r\nno colon\r\n\r\nx\r\n--a--", "has no ':'"),
            ("multipart/form-data; boundary=a", "--a junk\r\n\r\nx\r\n--a--", "not followed by a line break"),
            ("multipart/form-data; boundary=a", "--a\r\nContent-Disposition: form-data; name=x", "do not end in an empty line"),
        ])
    func refused(contentType: String, body: String, reason: String) {
        let error = #expect(throws: MultipartFormData.Failure.self) {
            try MultipartFormData(parsing: Self.bytes(body), contentType: contentType)
        }
        #expect(error?.reason.contains(reason) == true, "\(String(describing: error))")
    }

    @Test("A hostile body is bounded: more than 1,000 parts, headers without an end")
    func bounded() {
        let part = Self.bytes("--a\r\nContent-Disposition: form-data; name=x\r\n\r\n\r\n")
        let many = Array(Array(repeating: part, count: 1_001).joined()) + Self.bytes("--a--")
        let error = #expect(throws: MultipartFormData.Failure.self) { try MultipartFormData(parsing: many, boundary: "a") }
        #expect(error?.reason.contains("more than 1000 parts") == true)
        let endless =
            Self.bytes("--a\r\n") + Array(repeating: UInt8(ascii: "h"), count: 100_000) + Self.bytes("\r\n\r\nx\r\n--a--")
        #expect(throws: MultipartFormData.Failure.self) { try MultipartFormData(parsing: endless, boundary: "a") }
        // A thousand parts exactly are read.
        let thousand = Array(Array(repeating: part, count: 1_000).joined()) + Self.bytes("--a--")
        #expect((try? MultipartFormData(parsing: thousand, boundary: "a"))?.parts.count == 1_000)
    }
}
